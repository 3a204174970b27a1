// Files a peer sends us without our asking: a file_offer that answers none of our pulls
// (agent-bus-notes.md: "never dropped without a word"). The policy is explicit: the file is
// taken into the inbox within the receive caps of tether/bus's FileReceiver (256 MiB a file, 16
// incomplete and 512 MiB promised at once, shared with our pulls), saved under the state dir's
// downloads/ without overwriting anything, and announced by an inbox record beside the offer;
// anything the caps or the checks refuse is answered with file_ack {ok: false, error}.
import fs from 'node:fs';
import path from 'node:path';
import { placeExclusive, safeName } from './files.js';

const IDLE_MS = 60_000; // an incomplete transfer with no chunk for this long is given up
const REFUSED_KEPT = 256; // transfer ids already refused: their later chunks get no second word

export class InboxFiles {
  /**
   * @param {object} o
   * @param {import('../glue/bus.d.ts').BusApi} o.api
   * @param {import('../glue/bus.d.ts').FileReceiver} o.receiver shared with the pulls
   * @param {string} o.dir where received files are saved (created on first use)
   * @param {(peer: string, type: string, payload: unknown) => unknown} o.send
   * @param {(env: object, received: object) => void} o.store the offer's inbox record, with where it went
   * @param {(line: string) => void} [o.log]
   */
  constructor({ api, receiver, dir, send, store, log = () => {} }) {
    this.api = api;
    this.receiver = receiver;
    this.dir = dir;
    this.send = send;
    this.store = store;
    this.log = log;
    this.byTransfer = new Map(); // transferId -> {peer, env, offer, fd, part, at}
    this.refused = new Set();
  }

  refuse(peer, payload, error) {
    const ack = this.api.fileAckRefusal(payload, error);
    this.refused.add(ack.transferId);
    while (this.refused.size > REFUSED_KEPT)
      this.refused.delete(this.refused.values().next().value);
    this.send(peer, 'file_ack', ack);
  }

  drop(tid) {
    const st = this.byTransfer.get(tid);
    if (!st) return;
    this.byTransfer.delete(tid);
    this.receiver.abort(tid);
    try {
      fs.closeSync(st.fd);
    } catch {}
    fs.rmSync(st.part, { force: true });
  }

  sweep(now = Date.now()) {
    for (const [tid, st] of this.byTransfer)
      if (now - st.at > IDLE_MS) {
        this.refuse(
          st.peer,
          { transferId: tid },
          `no chunk for ${IDLE_MS / 1000} s; the transfer was given up`,
        );
        this.drop(tid);
      }
  }

  offer(peer, env) {
    this.sweep();
    const r = this.receiver.offer(peer, env.payload);
    if (r.ok === false) return this.refuse(peer, env.payload, r.detail);
    const tid = r.offer.transferId;
    let fd, part;
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      part = path.join(this.dir, `.tether-part-${tid.replace(/[^A-Za-z0-9_-]/g, '')}`);
      fd = fs.openSync(part, 'wx', 0o600);
    } catch (err) {
      this.receiver.abort(tid);
      return this.refuse(peer, env.payload, `cannot store it here (${err.code})`);
    }
    this.byTransfer.set(tid, { peer, env, offer: r.offer, fd, part, at: Date.now() });
  }

  chunk(peer, env) {
    const tid = env.payload?.transferId;
    const st = this.byTransfer.get(tid);
    if (!st || st.peer !== peer) {
      if (!this.refused.has(tid))
        this.refuse(
          peer,
          env.payload,
          'no transfer with this id was offered to us (or it was given up)',
        );
      return;
    }
    const r = this.receiver.chunk(peer, env.payload);
    if (r.ok === false) {
      this.drop(tid);
      return this.refuse(peer, env.payload, r.detail);
    }
    fs.writeSync(st.fd, r.data, 0, r.data.length, r.offset);
    st.at = Date.now();
  }

  complete(peer, env) {
    const tid = env.payload?.transferId;
    const st = this.byTransfer.get(tid);
    if (!st || st.peer !== peer) {
      if (!this.refused.has(tid))
        this.refuse(
          peer,
          env.payload,
          'no transfer with this id was offered to us (or it was given up)',
        );
      return;
    }
    const r = this.receiver.complete(peer, env.payload);
    if (r.ok === false) {
      this.drop(tid);
      return this.refuse(peer, env.payload, r.detail);
    }
    this.byTransfer.delete(tid);
    fs.fsyncSync(st.fd);
    fs.closeSync(st.fd);
    let saved;
    try {
      saved = placeExclusive(st.part, this.dir, safeName(r.offer.name));
    } catch (err) {
      fs.rmSync(st.part, { force: true });
      return this.refuse(peer, env.payload, `cannot store it here: ${err.message}`);
    }
    fs.rmSync(st.part, { force: true });
    this.store(st.env, {
      savedPath: saved,
      name: r.offer.name,
      size: r.offer.size,
      sha256: r.offer.sha256,
    });
    const ack = this.api.fileAckReceived(r.offer, path.basename(saved));
    if (ack.ok) this.send(peer, 'file_ack', ack.payload);
  }
}
