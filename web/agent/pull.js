// `tether agent pull PEER SHARE PATH`: fetch one file from a peer's shared folder over the simple
// one-to-one transfer (agent-bus-and-swarm.md § Simple one-to-one transfer, § Security boundary),
// in the public implementation's shapes (agent-bus-notes.md), so either end may be ninja-p2p.
//
// - The puller asks with `command {command: 'get-file', args: {share, path}}` (the bus core builds
//   it); the owner resolves the path with the listing's real-path containment rule and answers
//   with an ordinary, untagged file_offer, its file_chunks and file_complete (all transient), then
//   command_response {requestId, ok: true, result} naming the transfer; or with {ok: false,
//   error}. An untagged offer is matched to the oldest pull asked of that peer for that file name;
//   one nobody asked for is not ours (the sidecar's inbox policy takes or refuses it).
// - Both halves of the validation (the sender's plan, the receiver's ids, ownership, size, chunk
//   count, chunk length and final SHA-256) are tether/bus's; this file only moves bytes and files.
// - The receiver writes a part file beside the destination and moves it into place with link(),
//   which never replaces an existing file: a taken name gets a " (n)" suffix instead.
import fs from 'node:fs';
import path from 'node:path';
import { fileType } from './file-type.js';
import { placeExclusive, safeName } from './files.js';
import { resolveInShare } from './share.js';

export { placeExclusive, safeName };

const DRAIN_POLL_MS = 10;
const DRAIN_GIVE_UP_MS = 30_000;
const PULL_IDLE_MS = 60_000; // a pull with no progress for this long fails
const SERVED_KEPT = 64; // transfers whose file_ack we still expect
const FAILED_KEPT = 64; // failed pulls' transfers: the rest of their chunks get no second word

export class Pulls {
  /**
   * @param {object} o
   * @param {import('../glue/bus.d.ts').BusApi} o.api
   * @param {() => import('../peer/transport.d.ts').PeerTransport} o.transport
   * @param {(to: string, type: string, payload: unknown, topic?: string | null) => {ok: boolean, env?: {id: string}, text?: string, error?: string}} o.envelope
   * @param {() => Record<string, string>} o.shares
   * @param {(peer: string) => string | null} [o.whyNotNow] what keeps a send to `peer` from
   *   leaving (our own link down, the peer not in the room), for the refusal's wording
   * @param {(env: object, outcome: {result?: unknown} | {error: string}) => unknown} o.respond
   *   answers a command through the bus core (command_response {requestId, ok, result | error})
   * @param {import('../glue/bus.d.ts').FileReceiver} [o.receiver] shared with the inbox's: one set of caps
   * @param {(line: string) => void} [o.log]
   */
  constructor({
    api,
    transport,
    envelope,
    respond,
    shares,
    receiver,
    whyNotNow = () => null,
    log,
  }) {
    this.api = api;
    this.transport = transport;
    this.envelope = envelope;
    this.respond = respond;
    this.shares = shares;
    this.whyNotNow = whyNotNow;
    this.log = log;
    this.receiver = receiver ?? api.createFileReceiver();
    this.serving = new Map(); // peer -> the promise of its last serve: one file at a time, in order
    this.active = new Map(); // pull request id -> state (our pulls)
    this.byTransfer = new Map(); // transferId -> state
    this.served = new Map(); // transferId -> what we served, until its file_ack (bounded)
    this.failed = new Map(); // transferId -> peer, of pulls that failed once the offer came (bounded)
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
    const ask = this.api.shareCommandPayload({ command: 'get-file', share, path: rel });
    if (ask.ok === false)
      return { ok: false, error: `cannot ask for ${share}/${rel}: ${ask.detail}` };
    const r = this.sendNow(peer, 'command', ask.payload);
    if (!r.ok) return r;
    const st = {
      id: r.id,
      peer,
      share,
      // The path as the owner reads it, which names the file it sends.
      path: this.api.sharePath(rel),
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
        this.fail(st, `no progress from '${st.peer}' for ${PULL_IDLE_MS / 1000} s; try again`, {
          detail: `no chunk for ${PULL_IDLE_MS / 1000} s; the pull was given up`,
        });
    }, 1000);
    st.timer.unref?.();
  }

  status(id) {
    const st = this.active.get(id);
    if (!st) return { ok: false, error: `no pull ${id} in this sidecar` };
    const { fd, timer, ...rest } = st;
    return { ok: true, ...rest };
  }

  /**
   * Fails pull `st`. Once its offer came, the owner is told once, with file_ack {ok: false, error:
   * `detail`} about `payload` (the offer, chunk or completion refused; by default the transfer),
   * unless `ack` is false (the owner gave up itself). The transfer id is kept, so the chunks and
   * completion still on their way are dropped without a second word: without it they would fall
   * to the handler of files nobody asked for (web/agent/inbox-files.js), which refuses them again.
   * (agent-bus-notes.md § Bus messages: a file is refused with a file_ack, never silently; one
   * refusal says it.)
   * @param {object} st
   * @param {string} error what `pull` reports
   * @param {{payload?: import('../glue/bus.d.ts').JsonValue, detail?: string, ack?: boolean}} [refusal]
   */
  fail(st, error, { payload, detail = error, ack = true } = {}) {
    if (st.state === 'done' || st.state === 'failed') return;
    st.state = 'failed';
    st.error = error;
    if (ack && (payload || st.transferId))
      this.sendNow(
        st.peer,
        'file_ack',
        this.api.fileAckRefusal(payload ?? { transferId: st.transferId }, detail),
      );
    const tid = st.transferId ?? /** @type {{transferId?: unknown}} */ (payload ?? {}).transferId;
    if (typeof tid === 'string') {
      this.failed.set(tid, st.peer);
      while (this.failed.size > FAILED_KEPT) this.failed.delete(this.failed.keys().next().value);
    }
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

  /**
   * A command_response to our get-file (correlated by requestId, as the bus core reads it): a
   * refusal fails the pull; the owner's closing {ok: true} is taken too. Returns whether it was ours.
   */
  response(peer, env) {
    for (const [id, st] of this.active) {
      if (st.peer !== peer || !this.api.matchReceipt(env, { requestId: id, peer })) continue;
      if (env.payload?.ok === false)
        this.fail(st, `'${peer}' refused: ${env.payload.error ?? 'no reason given'}`, {
          ack: false,
        });
      return true;
    }
    return false;
  }

  /**
   * An untagged file_offer from `peer`: ours when it answers a pull we asked of it. The owner
   * names the file after the path as it reads it (the bus core's share_path), and so did we when
   * the pull started.
   */
  offer(peer, env) {
    const name = env.payload?.name;
    let st = null;
    for (const p of this.active.values())
      if (p.peer === peer && p.state === 'requested' && path.posix.basename(p.path) === name) {
        st = p;
        break; // the oldest: the owner answers in order
      }
    if (!st) return false;
    const r = this.receiver.offer(peer, env.payload);
    if (r.ok === false) {
      this.fail(st, `bad offer from '${peer}': ${r.detail}`, {
        payload: env.payload,
        detail: r.detail,
      });
      return true;
    }
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
      this.fail(st, `cannot write ${st.part} (${err.code})`, {
        detail: `cannot store it here (${err.code})`,
      });
      return true;
    }
    this.byTransfer.set(st.transferId, st);
    return true;
  }

  /** A file_chunk; returns whether it belongs to one of our pulls (a failed one's too). */
  chunk(peer, env) {
    const tid = env.payload?.transferId;
    const st = this.byTransfer.get(tid);
    if (!st || st.peer !== peer) return this.failed.get(tid) === peer;
    const r = this.receiver.chunk(peer, env.payload);
    if (r.ok === false) {
      this.fail(st, `bad chunk from '${peer}': ${r.detail}`, {
        payload: env.payload,
        detail: r.detail,
      });
      return true;
    }
    fs.writeSync(st.fd, r.data, 0, r.data.length, r.offset);
    st.received += r.data.length;
    st.lastProgress = Date.now();
    return true;
  }

  /** A file_complete; returns whether it belongs to one of our pulls (a failed one's too). */
  complete(peer, env) {
    const tid = env.payload?.transferId;
    const st = this.byTransfer.get(tid);
    if (!st || st.peer !== peer) return this.failed.get(tid) === peer;
    const r = this.receiver.complete(peer, env.payload);
    if (r.ok === false) {
      this.fail(st, `the file from '${peer}' did not verify: ${r.detail}`, {
        payload: env.payload,
        detail: r.detail,
      });
      return true;
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
    const ack = this.api.fileAckReceived(r.offer, path.basename(saved));
    if (ack.ok) this.sendNow(peer, 'file_ack', ack.payload);
    return true;
  }

  // ---- the owner -------------------------------------------------------------------------------

  /** Answers get-file `cmd` ({share, path}, from the bus core) of `peer`'s command `env`. */
  serve(peer, env, cmd) {
    // One file at a time per peer: the puller matches our untagged offers to its asks in order.
    const next = (this.serving.get(peer) ?? Promise.resolve()).then(() =>
      this.serveOne(peer, env, cmd),
    );
    this.serving.set(
      peer,
      next.catch(() => {}),
    );
    return next;
  }

  async serveOne(peer, env, { share, path: rel }) {
    const refuse = (error) => this.respond(env, { error });
    // `rel` as the bus core read it (parseShareCommand), as list-files reads it: `a\b.txt` is a/b.txt.
    const root = this.shares()[share];
    if (!root) return refuse(`no share named '${share}'`);
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
    // Named as asked (the public implementation's choice), not after a link's target; its type
    // guessed from that name, as the public implementation guesses it.
    const name = path.posix.basename(rel);
    const p = this.api.planFileSend({
      bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length),
      name,
      ...fileType(name),
      // Chunks sized so each envelope fits this peer's transport (a data channel's SCTP limit, a
      // relay's frame bound); the core picks the size (docs/agent-bus.md § One-to-one transfer).
      maxMessageBytes: this.transport().maxMessageSize?.(peer) ?? 0,
    });
    if (p.ok === false) return refuse(p.detail);
    const plan = p.plan;
    /** @type {[type: string, payload: object | null, index?: number][]} */
    const steps = [['file_offer', plan.offer]];
    for (let i = 0; i < plan.offer.totalChunks; i++) steps.push(['file_chunk', null, i]);
    steps.push(['file_complete', plan.complete]);
    for (const [type, payload, index] of steps) {
      const body = payload ?? plan.chunk(index);
      // The relay transport refuses while its socket is backed up: wait for it to drain, bounded.
      const until = Date.now() + DRAIN_GIVE_UP_MS;
      for (;;) {
        const r = this.sendNow(peer, type, body);
        if (r.ok) break;
        if (Date.now() > until || !this.transport().openPeers().includes(peer)) {
          this.log(`pull of ${share}/${rel} by ${peer} failed at ${type}: ${r.error}`);
          plan.dispose?.();
          return refuse(`the transfer of '${rel}' stopped at its ${type}: ${r.error}`);
        }
        await new Promise((res) => setTimeout(res, DRAIN_POLL_MS));
      }
    }
    plan.dispose?.();
    this.served.set(plan.offer.transferId, { peer, share, rel });
    while (this.served.size > SERVED_KEPT) this.served.delete(this.served.keys().next().value);
    const o = plan.offer;
    this.respond(env, {
      result: {
        share,
        path: rel,
        name: o.name,
        size: o.size,
        transferKind: o.kind,
        transferId: o.transferId,
        mimeType: o.mimeType,
        totalChunks: o.totalChunks,
        sha256: o.sha256,
      },
    });
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
