// MCAP files for the record/replay tests, read and written with @mcap/core in Node: a full
// validating pass (every record, CRCs), the indexed reader over a file, and a large generated
// recording with many chunks for the seek test.
import { open, readFile } from 'node:fs/promises';
import { McapIndexedReader, McapStreamReader, McapWriter } from '@mcap/core';

/** Reads every record of a file with CRC checks; throws on any malformed byte. */
export async function validateWhole(path) {
  const reader = new McapStreamReader({ validateCrcs: true });
  reader.append(new Uint8Array(await readFile(path)));
  const records = [];
  for (let r; (r = reader.nextRecord());) records.push(r);
  if (!reader.done())
    throw new Error(`${path}: ${reader.bytesRemaining()} bytes after the last record`);
  return records;
}

/** The indexed reader over a file on disk. */
export async function indexedReader(path) {
  const fh = await open(path);
  const { size } = await fh.stat();
  const readable = {
    size: async () => BigInt(size),
    read: async (offset, length) => {
      const buf = new Uint8Array(Number(length));
      await fh.read(buf, 0, buf.length, Number(offset));
      return buf;
    },
  };
  const reader = await McapIndexedReader.Initialize({ readable });
  return { reader, close: () => fh.close(), size };
}

/**
 * A recording of `seconds` of a 100 Hz stats.json.v1 channel with `padBytes` of padding per
 * message, in chunks of `chunkBytes`, carrying the cockpit's manifest metadata.
 */
export async function writeLargeRecording(
  path,
  { seconds = 600, hz = 100, padBytes = 600, chunkBytes = 256 << 10, corruptAt = -1 } = {},
) {
  const fh = await open(path, 'w');
  let pos = 0n;
  const writable = {
    write: async (b) => {
      await fh.write(b);
      pos += BigInt(b.byteLength);
    },
    position: () => pos,
  };
  const w = new McapWriter({ writable, chunkSize: chunkBytes });
  const enc = new TextEncoder();
  await w.start({ profile: '', library: 'tether tests' });
  const manifest = {
    version: 1,
    channels: [{ ch: 'stats', encoding: 'stats.json.v1', delivery: 'latest' }],
    panels: [
      { id: 'health', kind: 'stats', title: 'Stats', channels: ['stats'] },
      {
        id: 'plot',
        kind: 'plot',
        title: 'Plot',
        channels: ['stats'],
        params: { paths: ['stats.i'] },
      },
    ],
    layout: 'health',
    pages: ['plot'],
  };
  await w.addMetadata({
    name: 'tether.manifest',
    metadata: new Map([
      ['robot', 'big-1'],
      ['manifest', JSON.stringify(manifest)],
    ]),
  });
  const schemaId = await w.registerSchema({
    name: 'stats.json.v1',
    encoding: 'jsonschema',
    data: enc.encode('{}'),
  });
  const channelId = await w.registerChannel({
    topic: 'stats',
    schemaId,
    messageEncoding: 'json',
    metadata: new Map([
      ['tether.encoding', 'stats.json.v1'],
      ['tether.delivery', 'latest'],
    ]),
  });
  const t0 = 1_700_000_000_000_000_000n;
  if (corruptAt >= 0) {
    const poseSchema = await w.registerSchema({
      name: 'foxglove.PoseInFrame',
      encoding: 'jsonschema',
      data: enc.encode('{}'),
    });
    const pose = await w.registerChannel({
      topic: 'pose',
      schemaId: poseSchema,
      messageEncoding: 'json',
      metadata: new Map([['tether.encoding', 'pose.json.v1']]),
    });
    const t = t0 + 1n;
    await w.addMessage({
      channelId: pose,
      sequence: 0,
      logTime: t,
      publishTime: t,
      data: enc.encode('{"pose": {"posi'),
    });
  }
  const pad = 'p'.repeat(padBytes);
  const n = seconds * hz;
  for (let i = 0; i < n; i++) {
    const t = t0 + (BigInt(i) * 1_000_000_000n) / BigInt(hz);
    await w.addMessage({
      channelId,
      sequence: i,
      logTime: t,
      publishTime: t,
      // corruptAt: that message is not JSON, and a pose message in Foxglove's form is cut short.
      data: enc.encode(i === corruptAt ? '{"i": ' : JSON.stringify({ i, pad })),
    });
  }
  await w.end();
  await fh.close();
  return { t0, n, hz };
}
