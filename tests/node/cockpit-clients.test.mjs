// The cockpit's client cores through the WASM build and web/glue/cockpit-cores.js against their
// golden conversations (fixtures/cockpit/clients.json, written by the C++ generator): each script's
// inputs replayed here must give, step by step, the same actions, bytes, events and deadlines, so
// the two builds cannot drift. The native suite replays the same file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadTetherModule } from '../../web/glue/load.js';
import { createRobotCore, createViewerCore } from '../../web/glue/cockpit-cores.js';

const mod = await loadTetherModule();
const file = JSON.parse(
  readFileSync(new URL('../../fixtures/cockpit/clients.json', import.meta.url)),
);
const b64 = (s) => new Uint8Array(Buffer.from(s ?? '', 'base64'));
const toB64 = (bytes) => Buffer.from(bytes).toString('base64');

function drain(core) {
  const actions = [];
  for (let a = core.pollAction(); a; a = core.pollAction()) {
    const j = { kind: a.kind };
    if (a.bytes.length) j.b64 = toB64(a.bytes);
    if (a.reason) j.reason = a.reason;
    actions.push(j);
  }
  const events = [];
  for (let e = core.pollEvent(); e; e = core.pollEvent()) {
    const { kind, payload, ...body } = e;
    const j = { kind, body };
    if (payload?.length) j.payload_b64 = toB64(payload);
    events.push(j);
  }
  return { actions, events, timeout: core.pollTimeout() };
}

// What the file pins, in the shape drain() returns (event bodies parsed from their JSON text).
function expected(out) {
  return {
    actions: out.actions,
    events: out.events.map(({ kind, json, payload_b64 }) => ({
      kind,
      body: JSON.parse(json),
      ...(payload_b64 ? { payload_b64 } : {}),
    })),
    timeout: out.timeout,
  };
}

function viewerStep(v, s) {
  const now = s.now;
  switch (s.in) {
    case 'start':
      return v.handleStart(now);
    case 'connected':
      return v.handleConnected(s.lane, now);
    case 'disconnected':
      return v.handleDisconnected(s.detail, now);
    case 'control':
      return v.handleControlData(b64(s.b64), now);
    case 'ws':
      return v.handleWsMessage(b64(s.b64), now);
    case 'frame':
      return v.handleFrame(s.ch, s.seq, now);
    case 'timeout':
      return v.handleTimeout(now);
    case 'stop':
      return v.handleStop(now);
    case 'watch':
      return v.watch(s.robotId, now);
    case 'want':
      return v.want(s.channels, now);
    case 'teleop_start':
      return v.teleopStart(now);
    case 'teleop_stop':
      return v.teleopStop(now);
    case 'drive':
      return v.drive(s.vx, s.vy, s.wz, now);
    case 'estop':
      return v.estop(now);
    case 'publish':
      return v.publish(s.ch, b64(s.payload_b64), s.id, now);
  }
  throw new Error(`unknown viewer step ${s.in}`);
}

function robotStep(r, s) {
  const now = s.now;
  switch (s.in) {
    case 'start':
      return r.handleStart(now);
    case 'connected':
      return r.handleConnected(s.lane, now);
    case 'disconnected':
      return r.handleDisconnected(s.detail, now);
    case 'datagram':
      return r.handleDatagram(b64(s.b64), now);
    case 'carrier':
      return r.handleCarrierData(b64(s.b64), now);
    case 'carrier_end':
      return r.handleCarrierEnd(now);
    case 'ws':
      return r.handleWsMessage(b64(s.b64), now);
    case 'timeout':
      return r.handleTimeout(now);
    case 'stop':
      return r.handleStop(now);
    case 'send':
      return r.send(s.ch, b64(s.payload_b64), s.meta, s.ts, now);
    case 'ack':
      return r.ack(s.ch, s.id, now);
    case 'nack':
      return r.nack(s.ch, s.id, s.code, s.message, now);
  }
  throw new Error(`unknown robot step ${s.in}`);
}

function replay(core, script, step) {
  assert.ok(script.steps.length > 3);
  for (const [i, s] of script.steps.entries()) {
    const result = step(core, s);
    const got = drain(core);
    const where = `${script.name} step ${i} (${s.in} at ${s.now})`;
    assert.deepEqual(got, expected(s.out), where);
    if ('result' in s.out) assert.equal(result, s.out.result, `${where}: result`);
  }
}

for (const script of file.viewer) {
  test(`golden viewer conversation: ${script.name}`, () => {
    const v = createViewerCore(mod, { token: script.token ?? null });
    replay(v, script, viewerStep);
    v.dispose();
  });
}

for (const script of file.robot) {
  test(`golden robot conversation: ${script.name}`, () => {
    const r = createRobotCore(mod, script.config);
    replay(r, script, robotStep);
    r.dispose();
  });
}

test('robot config: what the relay would refuse is refused when the core is made, naming the field', () => {
  const base = file.robot[0].config;
  assert.throws(() => createRobotCore(mod, { ...base, id: '' }), /missing_robot_id/);
  assert.throws(() => createRobotCore(mod, { ...base, colour: 'red' }), /unknown key colour/);
  assert.throws(() => createRobotCore(mod, { ...base, watchdogMs: 0 }), /watchdogMs/);
  assert.throws(
    () =>
      createRobotCore(mod, {
        ...base,
        manifest: { version: 1, channels: [{ ch: '@x', encoding: 'json.v1' }] },
      }),
    /channels\[0\]\.ch/,
  );
  const ok = createRobotCore(mod, base);
  assert.equal(ok.manifest.channels[0].dir, 'rx', 'the manifest comes back in normal form');
  ok.dispose();
});
