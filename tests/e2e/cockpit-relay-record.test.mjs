// The Deno relay records server-side (--record DIR; docs/cockpit-recording.md § Recording on the
// relay). A robot (the SDK in this process over a real WebSocket) sends known frames on a
// reliable log channel and real zlib costmaps and voxels; the relay, stopped by SIGTERM, leaves
// files that @mcap/core's validating readers accept and that hold exactly the frames sent, in
// order; costmaps and voxels decode under Foxglove's Grid and PointCloud schemas with the cells
// and points sent. Rotation splits the stream across files without losing or repeating a frame
// and the folder keeps to its bound; a relay killed outright leaves a file whose finished chunks
// still read, in order.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { after, test } from 'node:test';
import { McapStreamReader } from '@mcap/core';
import { nodeRobot, until } from './lib/cockpit_clients.mjs';
import { killAll, startRelay } from './lib/cockpit_procs.mjs';
import { indexedReader, validateWhole } from './lib/mcap_files.mjs';

const manifest = {
  version: 1,
  channels: [
    { ch: 'log', encoding: 'json.v1', delivery: 'reliable' },
    { ch: 'costmap', encoding: 'costmap.zlib.v1', delivery: 'reliable' },
    { ch: 'voxels', encoding: 'voxels.zlib.v1', delivery: 'reliable' },
    { ch: 'cmd_vel', dir: 'tx', encoding: 'twist.json.v1' },
  ],
  panels: [{ id: 'drive', kind: 'teleop', channels: ['cmd_vel'] }],
};
const enc = new TextEncoder();
const dec = new TextDecoder();
const logLine = (n) => enc.encode(JSON.stringify({ level: 'info', text: `line ${n}`, n }));

// A 7x5 costmap: cell (x, y) costs (x + 10 y) % 101, the corner 255 (unknown).
const MAP = { w: 7, h: 5, res: 0.25, origin: [1.5, -2, 0.5] };
const cells = Uint8Array.from({ length: MAP.w * MAP.h }, (_, i) =>
  i === 0 ? 255 : ((i % MAP.w) + 10 * Math.floor(i / MAP.w)) % 101,
);
// Three voxels {int16 ix, iy, iz, uint8 value}.
const VOX = { n: 3, res: 0.5, origin: [1, 2, 3] };
const voxels = [
  [0, 0, 0, 10],
  [2, -1, 4, 200],
  [-3, 5, 1, 100],
];
const voxelBytes = () => {
  const b = Buffer.alloc(7 * voxels.length);
  voxels.forEach(([x, y, z, v], i) => {
    b.writeInt16LE(x, 7 * i);
    b.writeInt16LE(y, 7 * i + 2);
    b.writeInt16LE(z, 7 * i + 4);
    b.writeUInt8(v, 7 * i + 6);
  });
  return b;
};

const dirs = [];
after(() => {
  killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const folder = () => {
  const d = mkdtempSync(join(tmpdir(), 'tether-relay-record-'));
  dirs.push(d);
  return d;
};
const mcaps = (dir) =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.mcap'))
    .sort()
    .map((n) => join(dir, n));

/** Every message record a file holds, read as a stream (works without a summary). */
function streamMessages(path) {
  const reader = new McapStreamReader({ validateCrcs: true });
  reader.append(new Uint8Array(readFileSync(path)));
  const channels = new Map();
  const schemas = new Map();
  const messages = [];
  for (let r; (r = reader.nextRecord());) {
    if (r.type === 'Schema') schemas.set(r.id, r);
    if (r.type === 'Channel') channels.set(r.id, r);
    if (r.type === 'Message') {
      const c = channels.get(r.channelId);
      messages.push({ ch: c.topic, seq: r.sequence, logTime: r.logTime, data: r.data });
    }
  }
  return { messages, channels, schemas, done: reader.done() };
}
const logSeqs = (messages) => messages.filter((m) => m.ch === 'log').map((m) => m.seq);
const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** A relay recording into a fresh folder, a robot on it, and the robot's log sender. */
async function recordingRelay(args = []) {
  const dir = folder();
  const relay = await startRelay(['--record', dir, ...args]);
  const robot = await nodeRobot(relay.http, { id: 'r1', name: 'Rover', model: 'sim', manifest });
  // The recorder watches every listed robot and subscribes to its rx channels.
  await until(
    () => ['log', 'costmap', 'voxels'].every((ch) => robot.robot.wants(ch)),
    'the relay recorder subscribing',
  );
  const sendLog = (n) => assert.equal(robot.robot.send('log', logLine(n)), 'sent');
  return { dir, relay, robot, sendLog };
}

/**
 * Sends lines from..last, then one more at a time until the folder's finished chunks hold line
 * `last` (so the relay has it); returns the last line sent.
 */
async function sendUntilFiled({ dir, sendLog }, from, last) {
  for (let n = from; n <= last; n++) sendLog(n);
  // Padding after `last` pushes the chunk holding it out to disk; it is part of the stream too.
  let n = last;
  await until(() => {
    sendLog(++n);
    // A file may be deleted (the folder's bound) between the listing and the read.
    const holds = (p) => {
      try {
        return logSeqs(streamMessages(p).messages).includes(last);
      } catch (e) {
        if (e.code === 'ENOENT') return false;
        throw e;
      }
    };
    return mcaps(dir).some(holds);
  }, `line ${last} on disk`);
  return n;
}

async function stop(relay, signal) {
  const exited = new Promise((r) => relay.on('exit', (code, sig) => r({ code, sig })));
  process.kill(relay.pid, signal);
  return exited;
}

test('a relay stopped by SIGTERM leaves a valid file holding every frame sent, in order; costmaps and voxels are Foxglove Grid and PointCloud', async () => {
  const ctx = await recordingRelay(['--record-chunk-kib', '1']);
  const { relay, robot } = ctx;
  // The default bounds (256 MiB files, 60 min, 4 GiB kept), named in the status line.
  assert.match(
    relay.output,
    /tether relay: recording every robot to .* \(a new file each 262144 KiB or 60 min, at most 4194304 KiB kept\)/,
  );
  await until(() => /tether relay: recording r1 to .*\.mcap/.test(relay.output), 'the status line');
  assert.equal(
    robot.robot.send('costmap', deflateSync(cells), { meta: MAP, ts: 1700000000.25 }),
    'sent',
  );
  assert.equal(
    robot.robot.send('voxels', deflateSync(voxelBytes()), { meta: VOX, ts: 1700000001.5 }),
    'sent',
  );
  const sent = await sendUntilFiled(ctx, 1, 200);
  assert.deepEqual(await stop(relay, 'SIGTERM'), { code: 0, sig: null });
  assert.match(relay.output, /closed .*r1-.*\.mcap: \d+ messages/);

  const files = mcaps(ctx.dir);
  assert.equal(files.length, 1, `one file: ${files}`);
  assert.match(files[0], /\/r1-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.mcap$/);
  const records = await validateWhole(files[0]);
  assert.equal(records.at(-1).type, 'Footer');
  const { reader, close } = await indexedReader(files[0]);
  const byTopic = new Map([...reader.channelsById.values()].map((c) => [c.topic, c]));
  const filed = [];
  for await (const m of reader.readMessages({ validateCrcs: true }))
    filed.push({ ch: reader.channelsById.get(m.channelId).topic, seq: m.sequence, data: m.data });
  const counts = Object.fromEntries(
    [...reader.statistics.channelMessageCounts].map(([id, n]) => [
      reader.channelsById.get(id).topic,
      Number(n),
    ]),
  );
  await close();

  // Every line, once, in the order sent, byte for byte, up to the last the relay had taken when
  // the signal came (at least every line seen on disk before; padding still on its way to the
  // relay's recorder may miss the file); the counts say the same.
  const lines = filed.filter((m) => m.ch === 'log');
  const kept = lines.at(-1).seq;
  assert.ok(kept >= 200 && kept <= sent, `lines 1..${kept} of ${sent} kept`);
  assert.deepEqual(
    lines.map((m) => m.seq),
    range(1, kept),
  );
  lines.forEach((m, i) => assert.deepEqual(m.data, logLine(i + 1), `line ${i + 1}`));
  assert.deepEqual(counts, { log: kept, costmap: 1, voxels: 1 });
  // Log times strictly increase through the file, in arrival order.
  const times = records.filter((r) => r.type === 'Message').map((r) => r.logTime);
  assert.ok(times.every((t, i) => i === 0 || t > times[i - 1]));

  // The costmap as Foxglove's Grid: the schema by name, the fields Foxglove reads.
  const grid = byTopic.get('costmap');
  assert.equal(grid.messageEncoding, 'json');
  assert.equal(reader.schemasById.get(grid.schemaId).name, 'foxglove.Grid');
  const g = JSON.parse(dec.decode(filed.find((m) => m.ch === 'costmap').data));
  assert.deepEqual(g.timestamp, { sec: 1700000000, nsec: 250000000 });
  assert.equal(g.frame_id, 'map');
  assert.deepEqual(g.pose.position, { x: 1.5, y: -2, z: 0 });
  assert.ok(Math.abs(2 * Math.atan2(g.pose.orientation.z, g.pose.orientation.w) - 0.5) < 1e-12);
  assert.equal(g.column_count, MAP.w);
  assert.deepEqual(g.cell_size, { x: 0.25, y: 0.25 });
  assert.equal(g.row_stride, MAP.w);
  assert.equal(g.cell_stride, 1);
  assert.deepEqual(g.fields, [{ name: 'cost', offset: 0, type: 1 }]); // UINT8
  assert.deepEqual(new Uint8Array(Buffer.from(g.data, 'base64')), cells);

  // The voxels as Foxglove's PointCloud: voxel centres in the map frame, colours as bytes.
  const cloud = byTopic.get('voxels');
  assert.equal(reader.schemasById.get(cloud.schemaId).name, 'foxglove.PointCloud');
  const p = JSON.parse(dec.decode(filed.find((m) => m.ch === 'voxels').data));
  assert.equal(p.frame_id, 'map');
  assert.equal(p.point_stride, 16);
  assert.deepEqual(
    p.fields.map((f) => [f.name, f.offset, f.type]),
    [
      ['x', 0, 7],
      ['y', 4, 7],
      ['z', 8, 7],
      ['red', 12, 1],
      ['green', 13, 1],
      ['blue', 14, 1],
      ['alpha', 15, 1],
    ],
  );
  const data = Buffer.from(p.data, 'base64');
  assert.equal(data.length, 16 * voxels.length);
  voxels.forEach(([x, y, z], i) => {
    const centre = [x, y, z].map((v, k) => VOX.origin[k] + (v + 0.5) * VOX.res);
    const got = [0, 4, 8].map((o) => data.readFloatLE(16 * i + o));
    got.forEach((v, k) => assert.ok(Math.abs(v - centre[k]) < 1e-5, `voxel ${i}: ${got}`));
    assert.equal(data[16 * i + 15], 255);
  });
  // Different values get different colours.
  assert.notDeepEqual([...data.subarray(12, 15)], [...data.subarray(28, 31)]);
});

test('files rotate by size without losing or repeating a frame, and the folder keeps to its bound', async () => {
  const ctx = await recordingRelay([
    '--record-chunk-kib',
    '1',
    '--record-file-kib',
    '4',
    '--record-keep-kib',
    '64',
  ]);
  const sent = await sendUntilFiled(ctx, 1, 1500);
  assert.deepEqual(await stop(ctx.relay, 'SIGTERM'), { code: 0, sig: null });
  const files = mcaps(ctx.dir);
  assert.ok(files.length >= 3, `rotated: ${files.length} files`);
  assert.match(ctx.relay.output, /deleted .*\.mcap to keep/);
  const total = files.reduce((n, f) => n + statSync(f).size, 0);
  // The bound holds but for the file being written when the last trim ran.
  const largest = Math.max(...files.map((f) => statSync(f).size));
  assert.ok(total <= 64 * 1024 + largest, `${total} bytes kept`);
  // Oldest files went: what is left is the newest run of lines, each once, in order, to the end.
  const seqs = [];
  for (const f of files) {
    await validateWhole(f);
    seqs.push(...logSeqs(streamMessages(f).messages));
  }
  assert.ok(seqs[0] > 1, 'the oldest lines were deleted with their files');
  assert.ok(seqs.at(-1) >= 1500 && seqs.at(-1) <= sent, `lines to ${seqs.at(-1)} of ${sent}`);
  assert.deepEqual(seqs, range(seqs[0], seqs.at(-1)));
});

test('a relay killed outright leaves a file whose finished chunks read, in order', async () => {
  const ctx = await recordingRelay(['--record-chunk-kib', '1']);
  await sendUntilFiled(ctx, 1, 300);
  assert.deepEqual(await stop(ctx.relay, 'SIGKILL'), { code: null, sig: 'SIGKILL' });
  const [file] = mcaps(ctx.dir);
  const { messages, done } = streamMessages(file);
  assert.equal(done, false, 'no summary or footer: the file was cut short');
  const seqs = logSeqs(messages);
  assert.ok(seqs.length >= 300, `${seqs.length} lines read back`);
  assert.deepEqual(seqs, range(1, seqs.length));
  await assert.rejects(indexedReader(file), 'the indexed reader needs the summary');
});
