// The WASM decode core against the same golden vectors as the native suite, through
// `tether/decode`.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { loadDecode } from '@tether-rt/tether/decode';

const repo = new URL('../../', import.meta.url);
const read = (path) => JSON.parse(readFileSync(new URL(path, repo), 'utf8'));
const b64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));
const hex = (bytes) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
const vectors = read('fixtures/decode/vectors.json');

let decode;
before(async () => {
  decode = await loadDecode();
});

test('compat: every dimos-v5 costmap inflates to its grid exactly', () => {
  const { vectors: maps } = read('fixtures/compat/dimos-v5/costmap_frames.json');
  assert.ok(maps.length >= 3);
  for (const v of maps) {
    const dec = new decode.ChannelDecoder('costmap.zlib.v1');
    assert.deepEqual(dec.decode(v.meta, b64(v.payload_b64)), { ok: true }, v.name);
    assert.equal(hex(dec.value.cells), hex(b64(v.grid_b64)), v.name);
    assert.deepEqual(dec.value.meta, v.meta, v.name);
    dec.close();
  }
});

test('golden costmaps: cells and north-up RGBA match the native build byte for byte', () => {
  for (const v of vectors.costmaps) {
    const dec = new decode.ChannelDecoder('costmap.zlib.v1');
    assert.ok(dec.decode(v.meta, b64(v.payload_b64)).ok, v.name);
    const { cells, rgba, meta } = dec.value;
    assert.equal(hex(cells), hex(b64(v.cells_b64)), v.name);
    assert.equal(hex(rgba), hex(b64(v.rgba_b64)), v.name);
    assert.equal(rgba.length, meta.w * meta.h * 4);
    dec.close();
  }
});

test('golden voxels: Float32 centres and colours match', () => {
  for (const v of vectors.voxels) {
    const dec = new decode.ChannelDecoder('voxels.zlib.v1');
    assert.ok(dec.decode(v.meta, b64(v.payload_b64)).ok, v.name);
    assert.deepEqual(Array.from(dec.value.positions), v.positions.map(Math.fround), v.name);
    assert.deepEqual(Array.from(dec.value.colours), v.colours.map(Math.fround), v.name);
    dec.close();
  }
});

test('golden invalid frames fail with their error and explain it', () => {
  for (const v of vectors.invalid) {
    const dec = new decode.ChannelDecoder(v.encoding);
    const r = dec.decode(v.meta, b64(v.payload_b64));
    assert.equal(r.ok, false, v.name);
    assert.equal(r.error.code, v.error, v.name);
    assert.ok(r.error.message.length > 20, v.name);
    assert.equal(dec.errors, 1);
    assert.equal(dec.value, null);
    dec.close();
  }
});

test('a corrupt frame keeps the last good map and counts the error', () => {
  const dec = new decode.ChannelDecoder('costmap.zlib.v1');
  const meta = { w: 3, h: 2, res: 0.1, origin: [0, 0, 0] };
  assert.ok(dec.decode(meta, deflateSync(Uint8Array.of(0, 100, 255, 50, 0, 0))).ok);
  const before = hex(dec.value.rgba);
  assert.equal(dec.decode(meta, Uint8Array.of(1, 2, 3)).error.code, 'not_zlib');
  assert.equal(hex(dec.value.rgba), before);
  assert.equal(dec.frames, 2);
  assert.equal(dec.errors, 1);
  assert.equal(dec.lastError, 'not_zlib');
  // Palette colours by pixel: image row 0 is cell row 1 (world max-y).
  const px = (i) => Array.from(dec.value.rgba.subarray(i * 4, i * 4 + 4));
  assert.deepEqual(px(3), vectors.palette['0']);
  assert.deepEqual(px(4), vectors.palette['100']);
  assert.deepEqual(px(5), vectors.palette['255']);
  assert.deepEqual(px(0), vectors.palette['50']);
  dec.close();
});

test('pose, JSON and unknown encodings', () => {
  const pose = new decode.ChannelDecoder('pose.json.v1');
  assert.ok(pose.decode(undefined, Buffer.from('{"x":1,"y":2,"yaw":0.5}')).ok);
  assert.deepEqual(pose.value, { x: 1, y: 2, z: 0, yaw: 0.5, ts: 0 });
  const other = new decode.ChannelDecoder('battery.json.v3');
  assert.equal(other.kind, 'json');
  assert.ok(other.decode(undefined, Buffer.from('[1,2]')).ok);
  assert.deepEqual(other.value, [1, 2]);
  const unknown = new decode.ChannelDecoder('pointcloud.v9');
  assert.deepEqual(unknown.decode(undefined, Uint8Array.of(0xff)), { ok: true });
  assert.equal(unknown.kind, 'unsupported');
  assert.equal(decode.encodingKind('video.webrtc.v1'), 'track');
  for (const d of [pose, other, unknown]) d.close();
});
