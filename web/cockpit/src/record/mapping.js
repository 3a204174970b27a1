// How cockpit channels become MCAP channels and back (docs/cockpit-recording.md § Mapping). The
// MCAP format itself is @mcap/core's; this only picks, per tether encoding, the schema and message
// encoding Foxglove opens, and turns a replayed message back into the frame the panels take:
// - JSON encodings (json.v1, stats.json.v1, …): message encoding `json`, the payload untouched;
// - pose.json.v1: `foxglove.PoseInFrame` as JSON (yaw as a quaternion about z);
// - jpeg.v1: `foxglove.CompressedImage` as JSON (the JPEG in base64, format "jpeg");
// - costmap.zlib.v1: `foxglove.Grid` as JSON (one uint8 `cost` field per cell, row 0 at min-y);
// - voxels.zlib.v1: `foxglove.PointCloud` as JSON (x, y, z float32 and red, green, blue, alpha
//   uint8 per voxel centre);
// - anything else: the whole tether data frame, header and payload, in message encoding
//   `tether.frame`, encoded and decoded by the wire core. Files recorded before costmaps and
//   voxels had Foxglove schemas hold them this way, and still replay.
// The browser recorder and the relay's --record share this file (and recording.js), so both
// write the same files.

export const FRAME_ENCODING = 'tether.frame';
export const MANIFEST_METADATA = 'tether.manifest';
const enc = new TextEncoder();
const dec = new TextDecoder();

// Foxglove's NumericType values (PackedElementField.type).
const UINT8 = 1;
const FLOAT32 = 7;
// One voxel in a foxglove.PointCloud: x, y, z float32 then red, green, blue, alpha uint8.
export const POINT_STRIDE = 16;

// Just enough of Foxglove's JSON schemas to name the fields; Foxglove identifies them by name.
const time = {
  type: 'object',
  properties: { sec: { type: 'integer' }, nsec: { type: 'integer' } },
};
const numbers = (keys) => ({
  type: 'object',
  properties: Object.fromEntries(keys.map((k) => [k, { type: 'number' }])),
});
const pose = {
  type: 'object',
  properties: { position: numbers(['x', 'y', 'z']), orientation: numbers(['x', 'y', 'z', 'w']) },
};
const packedFields = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      offset: { type: 'integer' },
      type: { type: 'integer' },
    },
  },
};
const bytes = { type: 'string', contentEncoding: 'base64' };
const stamped = (name, properties) => ({
  title: name,
  type: 'object',
  properties: { timestamp: time, frame_id: { type: 'string' }, ...properties },
});
const SCHEMAS = {
  'foxglove.PoseInFrame': stamped('foxglove.PoseInFrame', { pose }),
  'foxglove.CompressedImage': stamped('foxglove.CompressedImage', {
    data: bytes,
    format: { type: 'string' },
  }),
  'foxglove.Grid': stamped('foxglove.Grid', {
    pose,
    column_count: { type: 'integer' },
    cell_size: numbers(['x', 'y']),
    row_stride: { type: 'integer' },
    cell_stride: { type: 'integer' },
    fields: packedFields,
    data: bytes,
  }),
  'foxglove.PointCloud': stamped('foxglove.PointCloud', {
    pose,
    point_stride: { type: 'integer' },
    fields: packedFields,
    data: bytes,
  }),
};

/** The Foxglove schema names a replay maps back to tether encodings (files from elsewhere). */
export const FOXGLOVE_ENCODINGS = {
  'foxglove.CompressedImage': 'jpeg.v1',
  'foxglove.PoseInFrame': 'pose.json.v1',
};

/** Encoding kinds whose MCAP message is built from the decoded value, not the payload. */
export const DECODED_KINDS = new Set(['pose', 'costmap', 'voxels']);

/**
 * The MCAP schema, message encoding and conversions for one manifest channel. `messageEncoding`
 * is a replayed file's, so a file written with another mapping (tether.frame costmaps) replays.
 * @param {any} channel
 * @param {(encoding: string) => string} encodingKind
 * @param {{ messageEncoding?: string }} [options]
 */
export function channelMapping(channel, encodingKind, { messageEncoding } = {}) {
  if (messageEncoding === FRAME_ENCODING) return frameMapping(channel);
  const kind = encodingKind(channel.encoding);
  if (kind === 'pose') return foxglove('foxglove.PoseInFrame', poseToFoxglove, poseFromFoxglove);
  if (kind === 'jpeg')
    return foxglove('foxglove.CompressedImage', jpegToFoxglove, jpegFromFoxglove);
  if (kind === 'costmap') return foxglove('foxglove.Grid', gridToFoxglove, keptFrame);
  if (kind === 'voxels') return foxglove('foxglove.PointCloud', cloudToFoxglove, keptFrame);
  if (kind === 'json')
    return {
      messageEncoding: 'json',
      schema: { name: channel.encoding, encoding: 'jsonschema', data: enc.encode('{}') },
      toMcap: (frame) => frame.payload.slice(),
      fromMcap: (data, header) => ({ header, payload: data }),
    };
  return frameMapping(channel);
}

function frameMapping(channel) {
  return {
    messageEncoding: FRAME_ENCODING,
    schema: { name: channel.encoding, encoding: '', data: new Uint8Array(0) },
    toMcap: (frame, wire) => {
      const r = wire.encodeDataFrame(frame.header, frame.payload);
      return r.ok ? r.bytes.slice() : null;
    },
    fromMcap: (data, _header, wire) => {
      const r = wire.decodeDataFrame(data);
      return r.ok ? { header: r.header, payload: r.payload } : null;
    },
  };
}

function foxglove(name, to, from) {
  return {
    messageEncoding: 'json',
    schema: { name, encoding: 'jsonschema', data: enc.encode(JSON.stringify(SCHEMAS[name])) },
    toMcap: (frame, _wire, value) => enc.encode(JSON.stringify(to(frame, value))),
    fromMcap: (data, header) => from(JSON.parse(dec.decode(data)), header),
  };
}

const stamp = (ts) => {
  const sec = Math.floor(ts);
  return { sec, nsec: Math.round((ts - sec) * 1e9) };
};
const seconds = (t) => (t ? t.sec + t.nsec / 1e9 : 0);
const aboutZ = (yaw) => ({ x: 0, y: 0, z: Math.sin(yaw / 2), w: Math.cos(yaw / 2) });
const IDENTITY = { position: { x: 0, y: 0, z: 0 }, orientation: { x: 0, y: 0, z: 0, w: 1 } };

export function base64(b) {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

export function unbase64(text) {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function poseToFoxglove(frame, p) {
  return {
    timestamp: stamp(p.ts || frame.header.ts),
    frame_id: 'map',
    pose: { position: { x: p.x, y: p.y, z: p.z ?? 0 }, orientation: aboutZ(p.yaw) },
  };
}

function poseFromFoxglove(m, header) {
  const { position: p, orientation: q } = m.pose;
  const yaw = Math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z));
  const pose = { x: p.x, y: p.y, z: p.z, yaw, ts: seconds(m.timestamp) };
  return { header, payload: enc.encode(JSON.stringify(pose)) };
}

function jpegToFoxglove(frame) {
  // tether_meta keeps the frame's {w, h}; Foxglove ignores fields it does not know.
  return {
    timestamp: stamp(frame.header.ts),
    frame_id: 'camera',
    format: 'jpeg',
    data: base64(frame.payload),
    tether_meta: frame.header.meta,
  };
}

function jpegFromFoxglove(m, header) {
  return { header: { ...header, meta: m.tether_meta ?? header.meta }, payload: unbase64(m.data) };
}

// Costmaps and voxels carry their tether payload (zlib, a fraction of the cells' size) and meta
// beside Foxglove's fields, so our replay feeds the panels the frame as it arrived; Foxglove
// ignores the two extra fields.
const kept = (frame) => ({
  tether_meta: frame.header.meta,
  tether_payload: base64(frame.payload),
});

function keptFrame(m, header) {
  if (typeof m.tether_payload !== 'string') return null; // a Grid or PointCloud from elsewhere
  return { header: { ...header, meta: m.tether_meta }, payload: unbase64(m.tether_payload) };
}

// costmap.zlib.v1 cells are row-major with row 0 at world min-y from the origin corner, which is
// Grid's layout: the origin pose is the corner, rotated by the map's yaw.
function gridToFoxglove(frame, value) {
  const { w, res, origin } = value.meta;
  return {
    timestamp: stamp(frame.header.ts),
    frame_id: 'map',
    pose: { position: { x: origin[0], y: origin[1], z: 0 }, orientation: aboutZ(origin[2]) },
    column_count: w,
    cell_size: { x: res, y: res },
    row_stride: w,
    cell_stride: 1,
    fields: [{ name: 'cost', offset: 0, type: UINT8 }],
    data: base64(value.cells),
    ...kept(frame),
  };
}

// Voxel centres are world positions already (the decoder applied origin and resolution).
function cloudToFoxglove(frame, value) {
  const { positions, colours } = value;
  const n = positions.length / 3;
  const data = new Uint8Array(n * POINT_STRIDE);
  const view = new DataView(data.buffer);
  for (let i = 0; i < n; i++) {
    const o = i * POINT_STRIDE;
    view.setFloat32(o, positions[3 * i], true);
    view.setFloat32(o + 4, positions[3 * i + 1], true);
    view.setFloat32(o + 8, positions[3 * i + 2], true);
    data[o + 12] = Math.round(colours[3 * i] * 255);
    data[o + 13] = Math.round(colours[3 * i + 1] * 255);
    data[o + 14] = Math.round(colours[3 * i + 2] * 255);
    data[o + 15] = 255;
  }
  return {
    timestamp: stamp(frame.header.ts),
    frame_id: 'map',
    pose: IDENTITY,
    point_stride: POINT_STRIDE,
    fields: [
      { name: 'x', offset: 0, type: FLOAT32 },
      { name: 'y', offset: 4, type: FLOAT32 },
      { name: 'z', offset: 8, type: FLOAT32 },
      { name: 'red', offset: 12, type: UINT8 },
      { name: 'green', offset: 13, type: UINT8 },
      { name: 'blue', offset: 14, type: UINT8 },
      { name: 'alpha', offset: 15, type: UINT8 },
    ],
    data: base64(data),
    ...kept(frame),
  };
}
