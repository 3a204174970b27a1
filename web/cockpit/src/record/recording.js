// One MCAP recording of one robot's channels, written through @mcap/core's McapWriter to any
// IWritable: the browser's OPFS file (recorder.js) or the relay's files (web/host/relay-record.js).
// Both write the same file: the manifest as metadata, one MCAP channel per tether channel mapped
// by mapping.js, messages in arrival order with strictly increasing log times. Frames wait for
// the disk in one ordered queue; past `maxQueuedBytes` they are dropped and counted rather than
// held, so a slow disk never grows memory without bound.
import { McapWriter } from '@mcap/core';
import { DECODED_KINDS, MANIFEST_METADATA, channelMapping } from './mapping.js';

export const CHUNK_BYTES = 1 << 20;
// Frames waiting for the disk; past this the recording drops frames (counted) rather than grow.
export const MAX_QUEUED_BYTES = 64 << 20;

export class McapRecording {
  #writer;
  #ids = new Map(); // ch -> {id, mapping, decoder}
  #chain = Promise.resolve();
  #queued = 0;
  #failed = null;
  #lastLogTime = -1n;
  #wire;
  #maxQueued;
  counts = new Map(); // ch -> messages written
  dropped = 0;
  // Bytes of message data taken for the file, written or queued (the file is this plus MCAP's
  // framing): what a size bound measures, since a burst is queued faster than it is written.
  bytes = 0;

  /**
   * @param {{writable: {write(b: Uint8Array): Promise<void>, position(): bigint}, manifest: object,
   *   robotId: string, channels: string[], wire: object, decode: object, library: string,
   *   chunkSize?: number, maxQueuedBytes?: number}} o
   */
  static async start(o) {
    const r = new McapRecording();
    await r.#open(o);
    return r;
  }

  async #open({
    writable,
    manifest,
    robotId,
    channels,
    wire,
    decode,
    library,
    chunkSize = CHUNK_BYTES,
    maxQueuedBytes = MAX_QUEUED_BYTES,
  }) {
    this.#wire = wire;
    this.#maxQueued = maxQueuedBytes;
    this.#writer = new McapWriter({ writable, chunkSize });
    await this.#writer.start({ profile: '', library });
    await this.#writer.addMetadata({
      name: MANIFEST_METADATA,
      metadata: new Map([
        ['robot', robotId],
        ['manifest', JSON.stringify(manifest)],
      ]),
    });
    for (const ch of channels) {
      const channel = manifest.channels.find((c) => c.ch === ch);
      if (!channel) continue;
      const mapping = channelMapping(channel, decode.encodingKind);
      const schemaId = mapping.schema.name ? await this.#writer.registerSchema(mapping.schema) : 0;
      const id = await this.#writer.registerChannel({
        topic: ch,
        schemaId,
        messageEncoding: mapping.messageEncoding,
        metadata: new Map([
          ['tether.encoding', channel.encoding],
          ['tether.delivery', channel.delivery ?? 'latest'],
        ]),
      });
      const decoder = DECODED_KINDS.has(decode.encodingKind(channel.encoding))
        ? new decode.ChannelDecoder(channel.encoding)
        : null;
      this.#ids.set(ch, { id, mapping, decoder });
      this.counts.set(ch, 0);
    }
  }

  get channels() {
    return [...this.#ids.keys()];
  }

  get error() {
    return this.#failed;
  }

  /** Messages written so far, over every channel. */
  get messages() {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }

  /** A live frame at wall clock `nowMs`; frames of channels not recorded are ignored. */
  add(frame, nowMs) {
    const c = this.#ids.get(frame.header.ch);
    if (!c || this.#failed) return;
    let value;
    if (c.decoder) {
      // A frame its decoder refuses has no Foxglove form: it is left out (the panels drop it too).
      if (!c.decoder.decode(frame.header.meta, frame.payload).ok) return;
      value = c.decoder.value;
    }
    const data = c.mapping.toMcap(frame, this.#wire, value);
    if (!data) return;
    if (this.#queued + data.length > this.#maxQueued) {
      this.dropped++;
      return;
    }
    this.#queued += data.length;
    this.bytes += data.length;
    // Strictly increasing, so the file's order is the order frames arrived in even when two
    // arrive within the clock's resolution.
    let logTime = BigInt(Math.round(nowMs * 1e6));
    if (logTime <= this.#lastLogTime) logTime = this.#lastLogTime + 1n;
    this.#lastLogTime = logTime;
    const message = {
      channelId: c.id,
      sequence: frame.header.seq >>> 0,
      logTime,
      publishTime: frame.header.ts ? BigInt(Math.round(frame.header.ts * 1e9)) : logTime,
      data,
    };
    this.#chain = this.#chain
      .then(() => this.#writer.addMessage(message))
      .then(
        () => {
          this.#queued -= data.length;
          this.counts.set(frame.header.ch, this.counts.get(frame.header.ch) + 1);
        },
        (e) => (this.#failed ??= e),
      );
  }

  /** Writes what is queued, then the last chunk, the indexes and the summary. Throws if a write failed. */
  async end() {
    await this.#chain;
    for (const c of this.#ids.values()) c.decoder?.close();
    if (this.#failed) throw this.#failed;
    await this.#writer.end();
  }
}
