// Records cockpit channels into an MCAP file (@mcap/core's McapWriter) streamed to the origin
// private file system: chunks go to disk as they fill, so a long recording holds at most one
// chunk and the write queue in memory. The file is downloadable while the next one records.
import { McapWriter } from '@mcap/core';
import { MANIFEST_METADATA, channelMapping } from './mapping.js';

export const CHUNK_BYTES = 1 << 20;
// Frames waiting for the disk; past this the recorder drops frames (counted) rather than grow.
export const MAX_QUEUED_BYTES = 64 << 20;

/** An IWritable over an OPFS file stream. */
class OpfsWritable {
  #stream;
  #pos = 0n;
  constructor(stream) {
    this.#stream = stream;
  }
  async write(buffer) {
    await this.#stream.write(buffer);
    this.#pos += BigInt(buffer.byteLength);
  }
  position() {
    return this.#pos;
  }
}

export class Recorder {
  #writer;
  #stream;
  #handle;
  #ids = new Map(); // ch -> {id, mapping, decoder}
  #chain = Promise.resolve();
  #queued = 0;
  #failed = null;
  #lastLogTime = -1n;
  counts = new Map(); // ch -> messages written
  dropped = 0;
  name;

  /**
   * @param {{manifest: object, robotId: string, channels: string[], wire: object, decode: object}} o
   * @returns {Promise<Recorder>}
   */
  static async start(o) {
    if (!navigator.storage?.getDirectory)
      throw new Error(
        'this browser has no origin private file system; record in a current Chromium, Firefox or Safari',
      );
    const r = new Recorder();
    await r.#open(o);
    return r;
  }

  async #open({ manifest, robotId, channels, wire, decode }) {
    this.wire = wire;
    const dir = await navigator.storage.getDirectory();
    // Only the newest recording stays in the browser: the one before was offered for download.
    for await (const [name] of dir.entries())
      if (name.endsWith('.mcap')) await dir.removeEntry(name).catch(() => {});
    this.name = `${robotId}-${new Date().toISOString().replace(/[:.]/g, '-')}.mcap`;
    this.#handle = await dir.getFileHandle(this.name, { create: true });
    this.#stream = await this.#handle.createWritable();
    this.#writer = new McapWriter({
      writable: new OpfsWritable(this.#stream),
      chunkSize: CHUNK_BYTES,
    });
    await this.#writer.start({ profile: '', library: 'tether cockpit (@mcap/core)' });
    await this.#writer.addMetadata({
      name: MANIFEST_METADATA,
      metadata: new Map([
        ['robot', robotId],
        ['manifest', JSON.stringify(manifest)],
      ]),
    });
    for (const ch of channels) {
      const channel = manifest.channels.find((c) => c.ch === ch);
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
      const decoder =
        decode.encodingKind(channel.encoding) === 'pose'
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

  /** A live frame; frames of channels not recorded are ignored. */
  add(frame, nowMs) {
    const c = this.#ids.get(frame.header.ch);
    if (!c || this.#failed) return;
    let value;
    if (c.decoder) {
      if (!c.decoder.decode(frame.header.meta, frame.payload).ok) return;
      value = c.decoder.value;
    }
    const data = c.mapping.toMcap(frame, this.wire, value);
    if (!data) return;
    if (this.#queued + data.length > MAX_QUEUED_BYTES) {
      this.dropped++;
      return;
    }
    this.#queued += data.length;
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

  /** Ends the file (indexes and summary) and returns it, read from disk. */
  async stop() {
    await this.#chain;
    for (const c of this.#ids.values()) c.decoder?.close();
    if (this.#failed) {
      await this.#stream.abort?.();
      throw new Error(
        `recording failed: ${this.#failed.message}; the disk may be full (free space and record again)`,
      );
    }
    await this.#writer.end();
    await this.#stream.close();
    return this.#handle.getFile();
  }
}
