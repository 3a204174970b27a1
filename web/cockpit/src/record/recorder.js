// Records cockpit channels into an MCAP file (recording.js, on @mcap/core's McapWriter) streamed
// to the origin private file system: chunks go to disk as they fill, so a long recording holds at
// most one chunk and the write queue in memory. The file is downloadable while the next one
// records.
import { McapRecording } from './recording.js';

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
  #recording;
  #stream;
  #handle;
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

  async #open(o) {
    const dir = await navigator.storage.getDirectory();
    // Only the newest recording stays in the browser: the one before was offered for download.
    for await (const [name] of dir.entries())
      if (name.endsWith('.mcap')) await dir.removeEntry(name).catch(() => {});
    this.name = `${o.robotId}-${new Date().toISOString().replace(/[:.]/g, '-')}.mcap`;
    this.#handle = await dir.getFileHandle(this.name, { create: true });
    this.#stream = await this.#handle.createWritable();
    this.#recording = await McapRecording.start({
      ...o,
      writable: new OpfsWritable(this.#stream),
      library: 'tether cockpit (@mcap/core)',
    });
  }

  get channels() {
    return this.#recording.channels;
  }

  get counts() {
    return this.#recording.counts;
  }

  get dropped() {
    return this.#recording.dropped;
  }

  get error() {
    return this.#recording.error;
  }

  /** A live frame; frames of channels not recorded are ignored. */
  add(frame, nowMs) {
    this.#recording.add(frame, nowMs);
  }

  /** Ends the file (indexes and summary) and returns it, read from disk. */
  async stop() {
    try {
      await this.#recording.end();
    } catch (e) {
      await this.#stream.abort?.();
      throw new Error(
        `recording failed: ${e.message}; the disk may be full (free space and record again)`,
      );
    }
    await this.#stream.close();
    return this.#handle.getFile();
  }
}
