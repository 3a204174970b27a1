// `tether agent pull PEER SHARE PATH`: fetch one file from a peer's shared folder over the simple
// one-to-one transfer (agent-bus-and-swarm.md § Simple one-to-one transfer, § Security boundary).
//
// - The puller asks with a `command` {command: 'share.pull', share, path}; the owner resolves the
//   path with the listing's real-path containment rule, and answers with a command_response
//   refusal or with file_offer, file_chunk..., file_complete (all transient).
// - Both halves of the validation (the sender's plan, the receiver's ids, ownership, size, chunk
//   count, chunk length and final SHA-256) are tether/bus's; this file only moves bytes and files.
// - The receiver writes a part file beside the destination and moves it into place with link(),
//   which never replaces an existing file: a taken name gets a " (n)" suffix instead.
import fs from 'node:fs';
import path from 'node:path';
import { resolveInShare } from './share.js';
import { placeExclusive, safeName } from './files.js';

export { placeExclusive, safeName };

const DRAIN_POLL_MS = 10;
const DRAIN_GIVE_UP_MS = 30_000;
const PULL_IDLE_MS = 60_000; // a pull with no progress for this long fails
const PULL_TOPIC = 'share.pull:';
const SERVED_KEPT = 64; // transfers whose file_ack we still expect

export class Pulls {
  /**
   * @param {object} o
   * @param {import('../glue/bus.d.ts').BusApi} o.api
   * @param {() => import('../peer/transport.d.ts').PeerTransport} o.transport
   * @param {(to: string, type: string, payload: unknown) => {ok: boolean, env?: object, text?: string, error?: string}} o.envelope
   * @param {() => Record<string, string>} o.shares
   * @param {(peer: string) => string | null} [o.whyNotNow] what keeps a send to `peer` from
   *   leaving (our own link down, the peer not in the room), for the refusal's wording
   */
  constructor({ api, transport, envelope, shares, whyNotNow = () => null, log }) {
    this.api = api;
    this.transport = transport;
    this.envelope = envelope;
    this.shares = shares;
    this.whyNotNow = whyNotNow;
    this.log = log;
    this.receiver = api.createFileReceiver();
    this.active = new Map(); // pull request id -> state (our pulls)
    this.byTransfer = new Map(); // transferId -> state
    this.served = new Map(); // transferId -> what we served, until its file_ack (bounded)
    this.seq = 0;
  }

  sendNow(to, type, payload, topic = null) {
    const e = this.envelope(to, type, payload, topic);
    if (!e.ok) return { ok: false, error: e.error };
    if (this.transport().send(to, e.text)) return { ok: true, id: e.env.id };
    const why = this.whyNotNow(to) ?? 'the transport did not take it (its buffer is full)';
    return { ok: false, error: `the ${type} to '${to}' was not sent: ${why}` };
  }

  // ---- the puller ----------------------------------------------------------------------------

  start(peer, share, rel, destDir) {
    let dir;
    try {
      dir = fs.realpathSync(destDir);
      if (!fs.statSync(dir).isDirectory())
        throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    } catch (err) {
      return {
        ok: false,
        error: `cannot save into ${destDir} (${err.code}); give an existing folder with --to`,
      };
    }
    const r = this.sendNow(peer, 'command', { command: 'share.pull', share, path: rel });
    if (!r.ok) return r;
    const st = {
      id: r.id,
      peer,
      share,
      path: rel,
      dir,
      state: 'requested',
      received: 0,
      size: null,
      startedAt: Date.now(),
      lastProgress: Date.now(),
      fd: null,
    };
    this.active.set(r.id, st);
    this.watch(st);
    return { ok: true, pull: r.id };
  }

  watch(st) {
    st.timer = setInterval(() => {
      if (st.state === 'done' || st.state === 'failed') return clearInterval(st.timer);
      if (Date.now() - st.lastProgress > PULL_IDLE_MS)
        this.fail(st, `no progress from '${st.peer}' for ${PULL_IDLE_MS / 1000} s; try again`);
    }, 1000);
    st.timer.unref?.();
  }

  status(id) {
    const st = this.active.get(id);
    if (!st) return { ok: false, error: `no pull ${id} in this sidecar` };
    const { fd, timer, ...rest } = st;
    return { ok: true, ...rest };
  }

  fail(st, error) {
    if (st.state === 'done' || st.state === 'failed') return;
    st.state = 'failed';
    st.error = error;
    if (st.transferId) {
      this.receiver.abort(st.transferId);
      this.byTransfer.delete(st.transferId);
    }
    if (st.fd !== null) {
      try {
        fs.closeSync(st.fd);
      } catch {}
      st.fd = null;
    }
    if (st.part) fs.rmSync(st.part, { force: true });
  }

  /** command_response to our share.pull: only refusals come this way. */
  response(peer, env) {
    const st = this.active.get(env.payload?.messageId);
    if (!st || st.peer !== peer) return false;
    if (env.payload.ok === false)
      this.fail(st, `'${peer}' refused: ${env.payload.error ?? 'no reason given'}`);
    return true;
  }

  offer(peer, env) {
    // The offer names the pull it answers in its topic (the payload stays the bus's offer shape).
    const st = this.active.get(
      typeof env.topic === 'string' && env.topic.startsWith(PULL_TOPIC)
        ? env.topic.slice(PULL_TOPIC.length)
        : '',
    );
    if (st && (st.peer !== peer || st.state !== 'requested')) return;
    if (!st) return; // an offer nobody asked for is dropped
    const r = this.receiver.offer(peer, env.payload);
    if (!r.ok) return this.fail(st, `bad offer from '${peer}': ${r.detail}`);
    st.transferId = r.offer.transferId;
    st.offer = r.offer;
    st.size = r.offer.size;
    st.state = 'receiving';
    st.lastProgress = Date.now();
    st.part = path.join(
      st.dir,
      `.tether-part-${r.offer.transferId.replace(/[^A-Za-z0-9_-]/g, '')}`,
    );
    try {
      // 0666 less the umask, as every other way a file arrives (swarm fetches: storage-node.js).
      st.fd = fs.openSync(st.part, 'wx', 0o666);
    } catch (err) {
      return this.fail(st, `cannot write ${st.part} (${err.code})`);
    }
    this.byTransfer.set(st.transferId, st);
  }

  chunk(peer, env) {
    const st = this.byTransfer.get(env.payload?.transferId);
    if (!st || st.peer !== peer) return;
    const r = this.receiver.chunk(peer, env.payload);
    if (!r.ok) return this.fail(st, `bad chunk from '${peer}': ${r.detail}`);
    fs.writeSync(st.fd, r.data, 0, r.data.length, r.offset);
    st.received += r.data.length;
    st.lastProgress = Date.now();
  }

  complete(peer, env) {
    const st = this.byTransfer.get(env.payload?.transferId);
    if (!st || st.peer !== peer) return;
    const r = this.receiver.complete(peer, env.payload);
    const ack = (extra) => this.sendNow(peer, 'file_ack', { transferId: st.transferId, ...extra });
    if (!r.ok) {
      ack({ ok: false, error: r.detail });
      return this.fail(st, `the file from '${peer}' did not verify: ${r.detail}`);
    }
    fs.fsyncSync(st.fd);
    fs.closeSync(st.fd);
    st.fd = null;
    const saved = placeExclusive(st.part, st.dir, safeName(r.offer.name));
    fs.rmSync(st.part, { force: true });
    st.part = null;
    this.byTransfer.delete(st.transferId);
    st.state = 'done';
    st.savedPath = saved;
    st.sha256 = r.offer.sha256;
    ack({
      ok: true,
      name: r.offer.name,
      size: r.offer.size,
      sha256: r.offer.sha256,
      savedPath: path.basename(saved),
    });
  }

  // ---- the owner -------------------------------------------------------------------------------

  async serve(peer, env) {
    const { share, path: rel } = env.payload ?? {};
    const refuse = (error) =>
      this.sendNow(peer, 'command_response', { messageId: env.id, ok: false, error });
    const root = this.shares()[share];
    if (typeof share !== 'string' || !root) return refuse(`no share named '${share}'`);
    let real;
    try {
      real = fs.realpathSync(root);
    } catch {
      return refuse(`share '${share}' is not available`);
    }
    const at = resolveInShare(real, rel);
    if (at.error) return refuse(at.error);
    let bytes;
    try {
      const st = fs.statSync(at.real);
      if (!st.isFile()) return refuse(`'${rel}' is not a file`);
      if (st.size > this.api.limits.fileMaxBytes)
        return refuse(
          `'${rel}' is over ${this.api.limits.fileMaxBytes} bytes; use swarm for big files`,
        );
      bytes = fs.readFileSync(at.real);
    } catch (err) {
      return refuse(`'${rel}' cannot be read (${err.code})`);
    }
    const p = this.api.planFileSend({
      bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length),
      name: path.basename(at.real),
    });
    if (!p.ok) return refuse(p.detail);
    const plan = p.plan;
    const steps = [['file_offer', plan.offer]];
    for (let i = 0; i < plan.offer.totalChunks; i++) steps.push(['file_chunk', null, i]);
    steps.push(['file_complete', plan.complete]);
    for (const [type, payload, index] of steps) {
      const body = payload ?? plan.chunk(index);
      // The relay transport refuses while its socket is backed up: wait for it to drain, bounded.
      const until = Date.now() + DRAIN_GIVE_UP_MS;
      for (;;) {
        const r = this.sendNow(
          peer,
          type,
          body,
          type === 'file_offer' ? PULL_TOPIC + env.id : null,
        );
        if (r.ok) break;
        if (Date.now() > until || !this.transport().openPeers().includes(peer)) {
          this.log(`pull of ${share}/${rel} by ${peer} failed at ${type}: ${r.error}`);
          plan.dispose?.();
          return;
        }
        await new Promise((res) => setTimeout(res, DRAIN_POLL_MS));
      }
    }
    plan.dispose?.();
    this.served.set(plan.offer.transferId, { peer, share, rel });
    while (this.served.size > SERVED_KEPT) this.served.delete(this.served.keys().next().value);
  }

  /** The puller's file_ack for a file we served: logged once; anything else is dropped. */
  acked(peer, env) {
    const id = env.payload?.transferId;
    const s = this.served.get(id);
    if (!s || s.peer !== peer) return;
    this.served.delete(id);
    this.log(
      env.payload.ok === false
        ? `'${peer}' could not save ${s.share}/${s.rel}: ${String(env.payload.error ?? 'no reason given').slice(0, 200)}`
        : `'${peer}' saved ${s.share}/${s.rel}`,
    );
  }
}
