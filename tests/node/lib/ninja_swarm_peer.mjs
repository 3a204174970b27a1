// A hand-built ninja-p2p 0.2.2 swarm peer for the tests (agent-bus-notes.md § Swarm messages): no
// tether code at all. It speaks the public implementation's envelopes and swarm payloads, writes
// its bitfields from given bytes (the golden vectors in fixtures/swarm/bitfields.json) and reads
// ours with its own decoder (chunk i at bit i & 7 of byte i >> 3), so a test against it fails
// whenever our order differs from the public one. It serves only the chunks it holds and ignores
// requests for others (the asker times out), counting them, as the public implementation does.
import { createHash, randomBytes } from 'node:crypto';

const sha = (b) => createHash('sha256').update(b).digest();

/** A file as the public implementation chunks and offers it (inline chunk hashes). */
export function ninjaFile(bytes, { name = 'shared.bin', chunkSize = 1024 } = {}) {
  const chunks = [];
  for (let o = 0; o < bytes.length; o += chunkSize)
    chunks.push(bytes.subarray(o, Math.min(bytes.length, o + chunkSize)));
  const hashes = chunks.map((c) => sha(c));
  return {
    bytes,
    chunks,
    offer: {
      fileId: sha(bytes).toString('hex'),
      name,
      mimeType: 'application/octet-stream',
      size: bytes.length,
      chunkSize,
      totalChunks: chunks.length,
      chunkHashesHash: sha(Buffer.concat(hashes)).toString('hex'),
      chunkHashes: hashes.map((h) => h.toString('hex')),
    },
  };
}

/** Its own bitfield reader: chunk i is bit (i & 7) of byte (i >> 3). */
export function ninjaHeld(base64, totalChunks) {
  const bits = Buffer.from(base64, 'base64');
  const held = new Set();
  if (bits.length !== Math.ceil(totalChunks / 8)) return null; // it refuses any other length
  for (let i = 0; i < totalChunks; i++) if (bits[i >> 3] & (1 << (i & 7))) held.add(i);
  return held;
}

export class NinjaSwarmPeer {
  /**
   * @param {import('./loop_transport.mjs').LoopEndpoint} ep
   * @param {ReturnType<typeof ninjaFile>} file
   * @param {{holds?: number[], chunksB64?: string, corruptOnce?: number[]}} o  a holder: its chunks
   *   and their bitfield bytes; `corruptOnce`: chunks whose first answer has one byte flipped
   */
  constructor(ep, file, { holds = [], chunksB64 = null, corruptOnce = [] } = {}) {
    this.corruptOnce = new Set(corruptOnce);
    this.ep = ep;
    this.id = ep.selfId;
    this.file = file;
    this.held = new Map(holds.map((i) => [i, file.chunks[i]]));
    this.chunksB64 = chunksB64;
    this.views = new Map(); // peer -> Set of chunks its bitfield/haves say it holds
    this.asked = new Map(); // chunk -> peer, our outstanding requests
    this.askedForMissing = 0;
    this.received = 0;
    ep.subscribe({ open: (p) => this.opened(p), text: (p, t) => this.onText(p, t) });
  }

  envelope(type, to, payload) {
    return JSON.stringify({
      v: 1,
      id: randomBytes(12).toString('base64url'),
      type,
      from: { streamId: this.id, role: 'agent', name: this.id, instanceId: 'n1f2e3d4' },
      to,
      topic: null,
      ts: Date.now(),
      payload,
    });
  }

  send(to, type, payload) {
    return this.ep.send(to, this.envelope(type, to, payload));
  }

  // A holder announces the golden bytes it was given; a downloader, holding nothing, zeros.
  bitfield() {
    return (
      this.chunksB64 ?? Buffer.alloc(Math.ceil(this.file.chunks.length / 8)).toString('base64')
    );
  }

  announce(to) {
    this.send(to, 'swarm_announce', {
      fileId: this.file.offer.fileId,
      totalChunks: this.file.chunks.length,
      chunks: this.bitfield(),
    });
  }

  opened(peer) {
    if (this.held.size > 0) this.send(peer, 'swarm_offer', this.file.offer);
    this.announce(peer);
  }

  onText(peer, text) {
    const env = JSON.parse(text);
    const p = env.payload;
    if (!p || p.fileId !== this.file.offer.fileId) return;
    if (env.type === 'swarm_announce') {
      const held = ninjaHeld(p.chunks, this.file.chunks.length);
      if (!held) return;
      this.views.set(peer, held);
      if (env.to === null) this.announce(peer); // answers a broadcast bitfield with its own
    } else if (env.type === 'swarm_have') {
      const view = this.views.get(peer) ?? new Set();
      for (const i of p.indexes ?? [p.index]) view.add(i);
      this.views.set(peer, view);
    } else if (env.type === 'swarm_request') {
      const chunk = this.held.get(p.index);
      if (!chunk) return void this.askedForMissing++;
      const data = Buffer.from(chunk);
      if (this.corruptOnce.delete(p.index)) data[0] ^= 0xff;
      this.send(peer, 'swarm_chunk', {
        fileId: p.fileId,
        index: p.index,
        data: data.toString('base64'),
      });
    } else if (env.type === 'swarm_chunk') {
      const data = Buffer.from(p.data, 'base64');
      if (this.asked.get(p.index) !== peer) return;
      this.asked.delete(p.index);
      if (sha(data).toString('hex') !== this.file.offer.chunkHashes[p.index]) return;
      this.held.set(p.index, data);
      this.received++;
    }
    this.requestMore();
  }

  /** A downloader asks, for each chunk it lacks, a peer whose bitfield says it holds it. */
  requestMore() {
    if (this.held.size === this.file.chunks.length) return;
    for (let i = 0; i < this.file.chunks.length; i++) {
      if (this.held.has(i) || this.asked.has(i)) continue;
      for (const [peer, view] of this.views) {
        if (!view.has(i)) continue;
        this.asked.set(i, peer);
        this.send(peer, 'swarm_request', { fileId: this.file.offer.fileId, index: i });
        break;
      }
    }
  }

  complete() {
    return this.held.size === this.file.chunks.length;
  }

  bytes() {
    return Buffer.concat([...this.held.keys()].sort((a, b) => a - b).map((i) => this.held.get(i)));
  }
}
