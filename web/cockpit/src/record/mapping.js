// How cockpit channels become MCAP channels and back (docs/cockpit-recording.md § Mapping). The
// MCAP format itself is @mcap/core's; this only picks, per tether encoding, the schema and message
// encoding Foxglove opens, and turns a replayed message back into the frame the panels take:
// - JSON encodings (json.v1, stats.json.v1, …): message encoding `json`, the payload untouched;
// - pose.json.v1: `foxglove.PoseInFrame` as JSON (yaw as a quaternion about z);
// - jpeg.v1: `foxglove.CompressedImage` as JSON (the JPEG in base64, format "jpeg");
// - anything else (costmap.zlib.v1, voxels.zlib.v1, …): the whole tether data frame, header and
//   payload, in message encoding `tether.frame`, encoded and decoded by the wire core.

export const FRAME_ENCODING = 'tether.frame';
export const MANIFEST_METADATA = 'tether.manifest';
const enc = new TextEncoder();
const dec = new TextDecoder();

// Just enough of Foxglove's JSON schemas to name the fields; Foxglove identifies them by name.
const time = {
  type: 'object',
  properties: { sec: { type: 'integer' }, nsec: { type: 'integer' } },
};
const vec3 = (keys) => ({
  type: 'object',
  properties: Object.fromEntries(keys.map((k) => [k, { type: 'number' }])),
});
const SCHEMAS = {
  'foxglove.PoseInFrame': {
    title: 'foxglove.PoseInFrame',
    type: 'object',
    properties: {
      timestamp: time,
      frame_id: { type: 'string' },
      pose: {
        type: 'object',
        properties: { position: vec3(['x', 'y', 'z']), orientation: vec3(['x', 'y', 'z', 'w']) },
      },
    },
  },
  'foxglove.CompressedImage': {
    title: 'foxglove.CompressedImage',
    type: 'object',
    properties: {
      timestamp: time,
      frame_id: { type: 'string' },
      data: { type: 'string', contentEncoding: 'base64' },
      format: { type: 'string' },
    },
  },
};

/** The MCAP schema, message encoding and conversions for one manifest channel. */
export function channelMapping(channel, encodingKind) {
  const kind = encodingKind(channel.encoding);
  if (kind === 'pose') return foxglove('foxglove.PoseInFrame', poseToFoxglove, poseFromFoxglove);
  if (kind === 'jpeg')
    return foxglove('foxglove.CompressedImage', jpegToFoxglove, jpegFromFoxglove);
  if (kind === 'json')
    return {
      messageEncoding: 'json',
      schema: { name: channel.encoding, encoding: 'jsonschema', data: enc.encode('{}') },
      toMcap: (frame) => frame.payload.slice(),
      fromMcap: (data, header) => ({ header, payload: data }),
    };
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

function poseToFoxglove(frame, pose) {
  return {
    timestamp: stamp(pose.ts || frame.header.ts),
    frame_id: 'map',
    pose: {
      position: { x: pose.x, y: pose.y, z: pose.z ?? 0 },
      orientation: { x: 0, y: 0, z: Math.sin(pose.yaw / 2), w: Math.cos(pose.yaw / 2) },
    },
  };
}

function poseFromFoxglove(m, header) {
  const { position: p, orientation: q } = m.pose;
  const yaw = Math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z));
  const pose = { x: p.x, y: p.y, z: p.z, yaw, ts: seconds(m.timestamp) };
  return { header, payload: enc.encode(JSON.stringify(pose)) };
}

function jpegToFoxglove(frame) {
  let s = '';
  const p = frame.payload;
  for (let i = 0; i < p.length; i += 0x8000) s += String.fromCharCode(...p.subarray(i, i + 0x8000));
  // tether_meta keeps the frame's {w, h}; Foxglove ignores fields it does not know.
  return {
    timestamp: stamp(frame.header.ts),
    frame_id: 'camera',
    format: 'jpeg',
    data: btoa(s),
    tether_meta: frame.header.meta,
  };
}

function jpegFromFoxglove(m, header) {
  const s = atob(m.data);
  const payload = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) payload[i] = s.charCodeAt(i);
  return { header: { ...header, meta: m.tether_meta ?? header.meta }, payload };
}
