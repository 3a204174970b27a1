// Replays an MCAP file through the cockpit's panels: @mcap/core's indexed reader reads the footer
// and summary (chunk indexes, channels, statistics) and then only the chunks a position needs, so
// a large file seeks without being read whole. Messages are paced by their log time at a chosen
// speed; a seek first shows each channel's last message at or before the position (what a live
// cockpit would show there), then plays on.
import { McapIndexedReader } from '@mcap/core';
import { FOXGLOVE_ENCODINGS, MANIFEST_METADATA, channelMapping } from './mapping.js';

/** An IReadable over a Blob (a File from a picker or OPFS) that counts the bytes it reads. */
export class BlobReadable {
  bytesRead = 0;
  reads = 0;
  constructor(blob) {
    this.blob = blob;
  }
  async size() {
    return BigInt(this.blob.size);
  }
  async read(offset, size) {
    this.bytesRead += Number(size);
    this.reads++;
    const start = Number(offset);
    return new Uint8Array(await this.blob.slice(start, start + Number(size)).arrayBuffer());
  }
}

/** The manifest to lay out: the one the recording carries, or one panel per known channel. */
async function manifestOf(reader, channels) {
  for await (const m of reader.readMetadata({ name: MANIFEST_METADATA })) {
    return {
      robotId: m.metadata.get('robot') ?? 'recording',
      manifest: JSON.parse(m.metadata.get('manifest')),
    };
  }
  // A file from elsewhere: its image and JSON channels, each in a panel of its own.
  const list = [...channels.values()];
  const manifest = {
    version: 1,
    channels: list.map((c) => ({ ch: c.topic, encoding: c.encoding, delivery: 'latest' })),
    panels: list.map((c, i) => ({
      id: `p${i}`,
      kind: c.encoding === 'jpeg.v1' ? 'video' : 'stats',
      title: c.topic,
      channels: [c.topic],
    })),
    pages: [],
  };
  manifest.layout = { row: manifest.panels.map((p) => p.id) };
  return { robotId: 'recording', manifest };
}

export class Player {
  #reader;
  #channels = new Map(); // channel id -> {topic, encoding, delivery, mapping}
  #run = 0;
  #emit;
  #wire;
  playing = false;
  speed = 1;
  /** @type {BlobReadable} the file, read in ranges */
  readable;
  /** @type {bigint} the first message's log time (ns) */
  start;
  /** @type {bigint} the last message's log time (ns) */
  end;
  /** @type {bigint} where playing goes on from (ns) */
  position;
  /** @type {string} the robot the file recorded ('recording' when it does not say) */
  robotId;
  /** @type {object} the manifest the file carries, or one made from its channels */
  manifest;
  // How many messages at exactly `position` were shown: several may share one log time, and
  // playing on must skip those and only those.
  #shownAt = 0;

  static async open(file, { wire, decode, emit }) {
    const p = new Player();
    p.readable = new BlobReadable(file);
    p.#reader = await McapIndexedReader.Initialize({ readable: p.readable });
    p.#wire = wire;
    p.#emit = emit;
    for (const [id, c] of p.#reader.channelsById) {
      const schema = p.#reader.schemasById.get(c.schemaId);
      const encoding =
        c.metadata.get('tether.encoding') ??
        FOXGLOVE_ENCODINGS[schema?.name] ??
        (c.messageEncoding === 'json' ? 'json.v1' : null);
      if (!encoding) continue;
      const channel = { ch: c.topic, encoding };
      p.#channels.set(id, {
        topic: c.topic,
        encoding,
        delivery: c.metadata.get('tether.delivery') ?? 'latest',
        mapping: channelMapping(channel, decode.encodingKind, {
          messageEncoding: c.messageEncoding,
        }),
      });
    }
    const starts = p.#reader.chunkIndexes.map((c) => c.messageStartTime);
    const ends = p.#reader.chunkIndexes.map((c) => c.messageEndTime);
    p.start =
      p.#reader.statistics?.messageStartTime ??
      (starts.length ? starts.reduce((a, b) => (b < a ? b : a)) : 0n);
    p.end =
      p.#reader.statistics?.messageEndTime ??
      (ends.length ? ends.reduce((a, b) => (b > a ? b : a)) : 0n);
    p.position = p.start;
    Object.assign(p, await manifestOf(p.#reader, p.#channels));
    return p;
  }

  get durationMs() {
    return Number(this.end - this.start) / 1e6;
  }

  #frame(m) {
    const c = this.#channels.get(m.channelId);
    if (!c) return null;
    const header = {
      ch: c.topic,
      seq: m.sequence,
      ts: Number(m.publishTime) / 1e9,
      delivery: c.delivery,
    };
    return c.mapping.fromMcap(m.data, header, this.#wire);
  }

  /** Messages the file holds that could not become frames (bad JSON, a bad tether frame). */
  badMessages = 0;

  #deliver(m) {
    let f = null;
    try {
      f = this.#frame(m);
    } catch {
      f = null; // a message this cockpit cannot read: counted and skipped, the replay goes on
    }
    if (f) this.#emit(f, m);
    else if (this.#channels.has(m.channelId)) this.badMessages++;
  }

  /** Shows the state at `position` (ns, bigint): each channel's last message at or before it. */
  async seek(position) {
    const run = ++this.#run;
    const wasPlaying = this.playing;
    this.playing = false;
    this.position = position < this.start ? this.start : position > this.end ? this.end : position;
    this.#shownAt = 0;
    const topics = [...new Set([...this.#channels.values()].map((c) => c.topic))];
    for (const topic of topics) {
      for await (const m of this.#reader.readMessages({
        topics: [topic],
        endTime: this.position,
        reverse: true,
      })) {
        if (run === this.#run) {
          this.#deliver(m);
          if (m.logTime === this.position) this.#shownAt++;
        }
        break;
      }
    }
    if (wasPlaying && run === this.#run) this.play();
  }

  /** Plays on from the position; from the end, plays again from the start. */
  play() {
    if (this.playing) return;
    const again = this.position >= this.end;
    if (again) {
      this.position = this.start;
      this.#shownAt = 0;
    }
    this.playing = true;
    this.#loop(++this.#run, this.position, this.#shownAt);
  }

  pause() {
    this.playing = false;
    this.#run++;
  }

  setSpeed(speed) {
    this.speed = speed;
    if (this.playing) {
      this.pause();
      this.play();
    }
  }

  // `skip`: the messages at `from` already shown (by the seek or the last run), in file order.
  async #loop(run, from, skip) {
    const wall0 = performance.now();
    const gen = this.#reader.readMessages({ startTime: from });
    try {
      for await (const m of gen) {
        if (run !== this.#run) return;
        if (m.logTime === from && skip > 0) {
          skip--;
          continue;
        }
        const due = wall0 + Number(m.logTime - from) / 1e6 / this.speed;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (run !== this.#run) return;
        this.#shownAt = m.logTime === this.position ? this.#shownAt + 1 : 1;
        this.position = m.logTime;
        this.#deliver(m);
      }
      if (run === this.#run) {
        this.playing = false;
        this.position = this.end;
      }
    } finally {
      await gen.return?.();
    }
  }
}
