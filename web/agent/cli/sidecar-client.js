// The CLI's side of the sidecar's control API: POST /rpc {cmd, args} on 127.0.0.1 with the bearer
// token from the state dir's 0600 endpoint.json (web/agent/sidecar/rpc-server.js is the other side).
import http from 'node:http';
import { files, pidAlive, readJson } from '../state.js';
import { UsageError } from './args.js';

const RPC_TIMEOUT_MS = 30_000;

/** The sidecar could not be asked: one line naming the log (exit 1), not a stack trace. */
const unreachable = (message) => Object.assign(new Error(message), { exitCode: 1 });

/** The running sidecar's endpoint, or a usage error saying how to start one. */
export function endpoint(dir) {
  const ep = readJson(files(dir).endpoint);
  if (!ep || !pidAlive(ep.pid)) {
    throw new UsageError(
      `no sidecar runs for ${dir}; start one with \`tether agent join --dir ${dir} --relay ws://HOST:PORT/ --room ROOM --id ID\``,
    );
  }
  return ep;
}

/** One call; resolves the sidecar's JSON reply ({ok, ...} or {ok: false, error}). */
export function rpc(dir, cmd, args = {}, ep = endpoint(dir)) {
  const body = JSON.stringify({ cmd, args });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: ep.port,
        path: '/rpc',
        method: 'POST',
        headers: {
          authorization: `Bearer ${ep.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(
              unreachable(
                `the sidecar (pid ${ep.pid}) sent an unreadable reply; see ${files(dir).log}`,
              ),
            );
          }
        });
      },
    );
    req.setTimeout(RPC_TIMEOUT_MS, () => req.destroy(new Error('timed out')));
    req.on('error', (err) =>
      reject(
        unreachable(
          `cannot reach the sidecar for ${dir} (${err.message}); check ${files(dir).log}, or run \`tether agent leave\` then \`join\``,
        ),
      ),
    );
    req.end(body);
  });
}

/** A call whose refusal is the command's answer: {ok: false, error} becomes a usage error. */
export async function call(dir, cmd, args) {
  const r = await rpc(dir, cmd, args);
  if (!r.ok) throw new UsageError(r.error);
  return r;
}
