// The cockpit's MCAP recording (web/cockpit/src/record/recording.js, the code the browser
// recorder and the relay's --record share) and its replay (player.js), in Node on the WASM build:
// a file written today holds costmaps as foxglove.Grid and voxels as foxglove.PointCloud, and a
// file written before that (costmaps and voxels as whole tether frames, `tether.frame`) still
// replays; both give the panels back the very frames recorded. Grids from other tools (no
// tether payload) are counted as unreadable, never crash the replay.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { McapWriter } from '@mcap/core';
import { loadTetherModule } from '../../web/glue/load.js';
import { createWire } from '../../web/glue/wire.js';
import { createDecode } from '../../web/glue/decode.js';
import { McapRecording } from '../../web/cockpit/src/record/recording.js';
import { Player } from '../../web/cockpit/src/record/player.js';

const mod = await loadTetherModule();
const wire = createWire(mod);
const decode = createDecode(mod);
const enc = new TextEncoder();

const manifest = {
  version: 1,
  channels: [
    { ch: 'costmap', encoding: 'costmap.zlib.v1', delivery: 'latest' },
    { ch: 'voxels', encoding: 'voxels.zlib.v1', delivery: 'latest' },
    { ch: 'pose', encoding: 'pose.json.v1', delivery: 'latest' },
  ],
  panels: [{ id: 'map', kind: 'map3d', title: 'Map', channels: ['voxels', 'costmap', 'pose'] }],
  layout: 'map',
  pages: [],
};
const MAP = { w: 4, h: 3, res: 0.5, origin: [1, 2, 0.25] };
const cells = Uint8Array.from({ length: 12 }, (_, i) => (i * 9) % 101);
const vox = Buffer.alloc(14);
vox.writeInt16LE(1, 0);
vox.writeInt16LE(-2, 2);
vox.writeInt16LE(3, 4);
vox.writeUInt8(50, 6);
vox.writeInt16LE(0, 7);
vox.writeUInt8(250, 13);
const frames = [
  {
    header: { ch: 'costmap', seq: 1, ts: 10.5, meta: MAP, delivery: 'latest' },
    payload: deflateSync(cells),
  },
  {
    header: {
      ch: 'voxels',
      seq: 1,
      ts: 11,
      meta: { n: 2, res: 0.1, origin: [0, 0, 0] },
      delivery: 'latest',
    },
    payload: deflateSync(vox),
  },
  {
    header: { ch: 'pose', seq: 1, ts: 11.5, delivery: 'latest' },
    payload: enc.encode(JSON.stringify({ x: 1, y: 2, yaw: 0.5, ts: 11.5 })),
  },
].map((f) => ({ ...f, payload: new Uint8Array(f.payload) }));

/** An in-memory IWritable; blob() is the file. */
function memory() {
  const parts = [];
  let pos = 0n;
  return {
    write: async (b) => {
      parts.push(b.slice());
      pos += BigInt(b.byteLength);
    },
    position: () => pos,
    blob: () => new Blob(parts),
  };
}

/** Replays a file and returns the frames it gives the panels, with the unreadable count. */
async function replay(blob) {
  const got = [];
  const p = await Player.open(blob, {
    wire,
    decode,
    emit: (f) => got.push({ header: f.header, payload: new Uint8Array(f.payload) }),
  });
  await p.seek(p.end);
  return { got, bad: p.badMessages, robotId: p.robotId };
}

const same = (got, want) => {
  assert.equal(got.header.ch, want.header.ch);
  assert.equal(got.header.seq, want.header.seq);
  assert.deepEqual(got.header.meta, want.header.meta);
  assert.deepEqual(got.payload, want.payload, `${want.header.ch} payload`);
};

test('a new file: Grid and PointCloud schemas, and replay gives back the frames recorded', async () => {
  const w = memory();
  const r = await McapRecording.start({
    writable: w,
    manifest,
    robotId: 'r1',
    channels: ['costmap', 'voxels', 'pose'],
    wire,
    decode,
    library: 'test',
  });
  frames.forEach((f, i) => r.add(f, 1000 + i));
  await r.end();
  assert.deepEqual(Object.fromEntries(r.counts), { costmap: 1, voxels: 1, pose: 1 });
  const { McapIndexedReader } = await import('@mcap/core');
  const blob = w.blob();
  const bytes = new Uint8Array(await blob.arrayBuffer());
  const reader = await McapIndexedReader.Initialize({
    readable: {
      size: async () => BigInt(bytes.length),
      read: async (o, n) => bytes.slice(Number(o), Number(o + n)),
    },
  });
  const names = Object.fromEntries(
    [...reader.channelsById.values()].map((c) => [
      c.topic,
      reader.schemasById.get(c.schemaId).name,
    ]),
  );
  assert.deepEqual(names, {
    costmap: 'foxglove.Grid',
    voxels: 'foxglove.PointCloud',
    pose: 'foxglove.PoseInFrame',
  });
  const { got, bad } = await replay(blob);
  assert.equal(bad, 0);
  for (const ch of ['costmap', 'voxels'])
    same(
      got.find((f) => f.header.ch === ch),
      frames.find((f) => f.header.ch === ch),
    );
});

test('an old file (costmaps and voxels as tether.frame) still replays, frame for frame', async () => {
  // Written as the cockpit wrote them before Grid and PointCloud: the whole tether data frame.
  const w = memory();
  const writer = new McapWriter({ writable: w });
  await writer.start({ profile: '', library: 'tether cockpit (@mcap/core)' });
  await writer.addMetadata({
    name: 'tether.manifest',
    metadata: new Map([
      ['robot', 'old-1'],
      ['manifest', JSON.stringify(manifest)],
    ]),
  });
  let t = 1000n;
  for (const f of frames.slice(0, 2)) {
    const schemaId = await writer.registerSchema({
      name: f.header.ch === 'costmap' ? 'costmap.zlib.v1' : 'voxels.zlib.v1',
      encoding: '',
      data: new Uint8Array(0),
    });
    const channelId = await writer.registerChannel({
      topic: f.header.ch,
      schemaId,
      messageEncoding: 'tether.frame',
      metadata: new Map([
        ['tether.encoding', manifest.channels.find((c) => c.ch === f.header.ch).encoding],
        ['tether.delivery', 'latest'],
      ]),
    });
    const bytes = wire.encodeDataFrame(f.header, f.payload);
    assert.ok(bytes.ok);
    await writer.addMessage({
      channelId,
      sequence: 1,
      logTime: t,
      publishTime: t,
      data: bytes.bytes.slice(),
    });
    t += 1000n;
  }
  await writer.end();
  const { got, bad, robotId } = await replay(w.blob());
  assert.equal(robotId, 'old-1');
  assert.equal(bad, 0);
  assert.equal(got.length, 2);
  for (const ch of ['costmap', 'voxels'])
    same(
      got.find((f) => f.header.ch === ch),
      frames.find((f) => f.header.ch === ch),
    );
});

test('a Grid from another tool (no tether payload) is counted unreadable, the rest replays', async () => {
  const w = memory();
  const writer = new McapWriter({ writable: w });
  await writer.start({ profile: '', library: 'elsewhere' });
  await writer.addMetadata({
    name: 'tether.manifest',
    metadata: new Map([
      ['robot', 'x'],
      ['manifest', JSON.stringify(manifest)],
    ]),
  });
  const schemaId = await writer.registerSchema({
    name: 'foxglove.Grid',
    encoding: 'jsonschema',
    data: enc.encode('{}'),
  });
  const grid = await writer.registerChannel({
    topic: 'costmap',
    schemaId,
    messageEncoding: 'json',
    metadata: new Map([['tether.encoding', 'costmap.zlib.v1']]),
  });
  const message = { frame_id: 'map', column_count: 4, cell_size: { x: 1, y: 1 }, data: 'AAAA' };
  await writer.addMessage({
    channelId: grid,
    sequence: 1,
    logTime: 1n,
    publishTime: 1n,
    data: enc.encode(JSON.stringify(message)),
  });
  await writer.end();
  const { got, bad } = await replay(w.blob());
  assert.equal(got.length, 0);
  assert.equal(bad, 1);
});
