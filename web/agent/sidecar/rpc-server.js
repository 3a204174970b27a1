// The sidecar's control API: POST /rpc {cmd, args} on 127.0.0.1, guarded by a bearer token that
// lives only in the state dir's 0600 endpoint.json (web/agent/cli/sidecar-client.js is the
// caller). Each concern of the sidecar contributes its own handlers (rpcHandlers()); a name taken
// twice is a programming error caught at start.
import http from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { files, writeJson } from '../state.js';

const MAX_RPC_BODY = 512 * 1024;

export class RpcServer {
  /**
   * @param {{dir: string, log: (msg: string) => void}} o
   */
  constructor({ dir, log }) {
    this.dir = dir;
    this.log = log;
    this.handlers = new Map();
    this.server = null;
  }

  /** Adds `{cmd: (args) => reply}` handlers. */
  add(handlers) {
    for (const [cmd, fn] of Object.entries(handlers)) {
      if (this.handlers.has(cmd)) throw new Error(`rpc '${cmd}' is registered twice`);
      this.handlers.set(cmd, fn);
    }
  }

  async dispatch(cmd, args) {
    const fn = this.handlers.get(cmd);
    if (!fn) return { ok: false, error: `unknown command '${cmd}'` };
    return fn(args);
  }

  async listen() {
    const token = randomBytes(24).toString('base64url');
    const want = Buffer.from(`Bearer ${token}`);
    this.server = http.createServer((req, res) => {
      const reply = (code, obj) => {
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      const got = Buffer.from(String(req.headers.authorization ?? ''));
      if (got.length !== want.length || !timingSafeEqual(got, want))
        return reply(401, { ok: false, error: 'bad token' });
      if (req.method !== 'POST' || req.url !== '/rpc')
        return reply(404, { ok: false, error: 'POST /rpc only' });
      const chunks = [];
      let size = 0;
      req.on('data', (c) => {
        size += c.length;
        if (size > MAX_RPC_BODY) req.destroy();
        else chunks.push(c);
      });
      req.on('end', async () => {
        let body;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reply(400, { ok: false, error: 'body must be JSON {cmd, args}' });
        }
        try {
          reply(200, await this.dispatch(String(body.cmd), body.args ?? {}));
        } catch (err) {
          this.log(`rpc ${body.cmd} failed: ${err.stack ?? err}`);
          reply(500, {
            ok: false,
            error: `the sidecar failed: ${err.message}; see ${files(this.dir).log}`,
          });
        }
      });
    });
    /** @type {Promise<void>} */
    const listening = new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', resolve);
    });
    await listening;
    writeJson(files(this.dir).endpoint, {
      port: /** @type {import('node:net').AddressInfo} */ (this.server.address()).port,
      token,
      pid: process.pid,
    });
  }

  close() {
    this.server?.close();
  }
}
