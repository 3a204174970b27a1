// The WASM build against every golden vector the native suite checks (DESIGN.md rule 5), through
// the public package entry point, so the two builds can never drift.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadWire } from '@tether-rt/tether/wire';

const repo = new URL('../../', import.meta.url);
const read = (path) => JSON.parse(readFileSync(new URL(path, repo), 'utf8'));
const b64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));
const hex = (bytes) => Buffer.from(bytes).toString('hex');

const frames = read('fixtures/wire/data_frames.json');
const messages = read('fixtures/wire/messages.json');
const manifests = read('fixtures/wire/manifests.json');
const compat = (name) => read(`fixtures/compat/dimos-v5/${name}`);

let wire;
before(async () => {
  wire = await loadWire();
});

test('golden data frames encode to their bytes and decode to their header and payload', () => {
  assert.ok(frames.vectors.length >= 10);
  for (const v of frames.vectors) {
    const enc = wire.encodeDataFrame(v.header, b64(v.payload_b64));
    assert.ok(enc.ok, v.name);
    assert.equal(hex(enc.bytes), hex(b64(v.frame_b64)), v.name);
    const dec = wire.decodeDataFrame(b64(v.frame_b64));
    assert.ok(dec.ok, v.name);
    assert.deepEqual(dec.header, v.header, v.name);
    assert.equal(hex(dec.payload), hex(b64(v.payload_b64)), v.name);
  }
});

test('golden invalid frames fail with their expected error and the protocol code to send', () => {
  assert.ok(frames.invalid.length >= 20);
  for (const v of frames.invalid) {
    const dec = wire.decodeDataFrame(b64(v.frame_b64));
    assert.equal(dec.ok, false, v.name);
    assert.equal(dec.error.reason, v.error, v.name);
    assert.ok(dec.error.message.length > 10, v.name);
    const want = v.error === 'control_too_large' ? 'control_too_large' : 'invalid_control';
    assert.equal(dec.error.code, want, v.name);
  }
});

test('a stream fed one byte at a time yields every golden frame, then ends cleanly', () => {
  const all = Buffer.concat(frames.vectors.map((v) => b64(v.frame_b64)));
  const stream = new wire.DataFrameStream();
  const got = [];
  for (const byte of all) {
    const r = stream.push(Uint8Array.of(byte));
    assert.equal(r.error, null);
    got.push(...r.frames);
  }
  assert.equal(stream.finish(), null);
  assert.equal(got.length, frames.vectors.length);
  got.forEach((f, i) => {
    assert.deepEqual(f.header, frames.vectors[i].header);
    assert.equal(hex(f.payload), hex(b64(frames.vectors[i].payload_b64)));
  });
  stream.close();
});

test('a stream reports a frame cut off by a reset, and an absurd length before buffering it', () => {
  const one = b64(frames.vectors[0].frame_b64);
  const cut = new wire.DataFrameStream();
  assert.deepEqual(cut.push(one.subarray(0, one.length - 1)).frames, []);
  assert.equal(cut.finish().reason, 'truncated');
  cut.close();
  const absurd = new wire.DataFrameStream();
  const r = absurd.push(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0));
  assert.equal(r.error.reason, 'header_too_large');
  assert.equal(absurd.buffered, 0);
  // Sticky, and other streams are unaffected.
  assert.equal(absurd.push(one).error.reason, 'header_too_large');
  const other = new wire.DataFrameStream();
  assert.equal(other.push(one).frames.length, 1);
  absurd.close();
  other.close();
});

test('golden messages: valid ones parse to their canonical JSON, invalid ones are dropped', () => {
  for (const v of messages.valid) {
    const r = wire.parseMessage(b64(v.text_b64), v.sender);
    assert.ok(r.ok, v.name);
    assert.equal(r.type, v.type, v.name);
    assert.equal(r.json, v.json, v.name);
    const frame = wire.encodeControlFrame(JSON.parse(v.json), v.sender);
    assert.ok(frame.ok, v.name);
    assert.equal(hex(frame.bytes), hex(b64(v.control_frame_b64)), v.name);
  }
  for (const v of messages.invalid) {
    const r = wire.parseMessage(b64(v.text_b64), v.sender);
    assert.equal(r.ok, false, v.name);
    assert.equal(r.drop.reason, v.reason, v.name);
    assert.equal(r.drop.field, v.field, v.name);
  }
});

test('golden hello checks', () => {
  for (const v of messages.hello_checks) {
    assert.equal(wire.checkHello(v.text, v.endpoint), v.error, v.name);
  }
});

test('golden manifests: normal forms and errors', () => {
  for (const v of manifests.vectors) {
    const r = wire.validateManifest(v.manifest);
    if (v.normal) {
      assert.ok(r.ok, v.name);
      assert.deepEqual(r.manifest, v.normal, v.name);
    } else {
      assert.equal(r.ok, false, v.name);
      assert.deepEqual(
        r.errors.map(({ code, path }) => ({ code, path })),
        v.errors,
        v.name,
      );
    }
  }
});

test('compat: every dimos-v5 data frame decodes and re-encodes to identical bytes', () => {
  for (const v of compat('data_frames.json').vectors) {
    const dec = wire.decodeDataFrame(b64(v.frame_b64));
    assert.ok(dec.ok, v.name);
    assert.deepEqual(dec.header, v.header, v.name);
    assert.equal(hex(dec.payload), hex(b64(v.payload_b64)), v.name);
    const enc = wire.encodeDataFrame(dec.header, dec.payload);
    assert.equal(hex(enc.bytes), hex(b64(v.frame_b64)), v.name);
  }
});

// Who sends each v5 vector, so the v7 parser can judge it.
function senderOf(m) {
  if (m.t === 'hello') return m.role;
  if (['ping'].includes(m.t)) return 'robot';
  if (['watch', 'sub', 'unsub'].includes(m.t)) return 'viewer';
  if (['teleop_start', 'teleop_stop', 'twist', 'stop'].includes(m.t))
    return 'gen' in m ? 'relay' : 'viewer';
  return 'relay';
}

test('compat: dimos-v5 control frames split correctly in one stream, one byte at a time', () => {
  const vectors = compat('control_frames.json').vectors;
  for (const sender of ['robot', 'viewer', 'relay']) {
    const stream = new wire.ControlStream(sender);
    const mine = vectors.filter((v) => senderOf(v.message) === sender);
    const all = Buffer.concat(mine.map((v) => b64(v.b64)));
    const got = [];
    for (const byte of all) got.push(...stream.push(Uint8Array.of(byte)).messages);
    assert.equal(got.length, mine.length);
    got.forEach((r, i) => {
      assert.ok(r.ok, mine[i].name);
      assert.deepEqual(r.message, mine[i].message, mine[i].name);
    });
    assert.equal(stream.finish(), null);
    stream.close();
  }
});

test('compat: every dimos-v5 datagram parses as the message it carries; v5 hello gets version_mismatch', () => {
  for (const v of compat('datagrams.json').vectors) {
    const r = wire.parseMessage(b64(v.b64), senderOf(v.message));
    assert.ok(r.ok, v.name);
    assert.deepEqual(r.message, v.message, v.name);
    if (v.message.t === 'hello')
      assert.equal(wire.checkHello(b64(v.b64), v.message.role), 'version_mismatch');
  }
});

test('error codes carry their terminal flags and a fix', () => {
  assert.equal(Object.keys(wire.errorCodes).length, 25);
  assert.equal(wire.errorCodes.auth_failed.terminal, true);
  assert.equal(wire.errorCodes.auth_failed.finalForClient, true);
  assert.equal(wire.errorCodes.teleop_held.terminal, false);
  for (const [code, info] of Object.entries(wire.errorCodes)) assert.ok(info.fix.length > 5, code);
  assert.equal(wire.limits.protocolVersion, 7);
  assert.equal(wire.limits.maxFrameBytes, 64 * 1024 * 1024);
});

test('hostile input through the binding: lone surrogates, bad senders, huge payloads', () => {
  // Embind's UTF-8 conversion mangles a lone surrogate; either way it must be refused, never repaired.
  assert.match(
    wire.parseMessage('{"t":"sub","ch":"\ud800"}', 'viewer').drop.reason,
    /^invalid_(utf8|json)$/,
  );
  assert.equal(wire.parseMessage({ t: 'sub', ch: '\ud800' }, 'viewer').ok, false);
  assert.equal(wire.parseMessage('{"t":"sub","ch":"a"}', 'martian').drop.reason, 'bad_sender');
  const enc = wire.encodeDataFrame(
    { ch: 'x', seq: 1.5, ts: 1, delivery: 'latest' },
    new Uint8Array(1),
  );
  assert.equal(enc.error.reason, 'invalid_header');
  assert.equal(
    wire.encodeDataFrame({ ch: 'x', seq: 1, ts: 1, delivery: 'soon' }).error.reason,
    'invalid_header',
  );
  assert.equal(
    wire.encodeDataFrame({ ch: 'x', seq: 1, ts: 1, delivery: 'latest', meta: [1] }).error.reason,
    'invalid_header',
  );
  const big = wire.encodeDataFrame(
    { ch: 'x', seq: 1, ts: 1, delivery: 'latest' },
    new Uint8Array(64 * 1024 * 1024),
  );
  assert.equal(big.error.reason, 'frame_too_large');
  assert.equal(wire.validateManifest('{"version":').errors[0].code, 'not_an_object');
});
