// WebRTC brokering through the WASM build against its golden conversations (fixtures/cockpit/rtc.json,
// written by the C++ generator): the relay with an SFU (web/glue/cockpit-relay.js) and the client
// cores' WebRTC video (web/glue/cockpit-cores.js), step by step the same actions, bytes, SFU calls
// and deadlines as the native build. Also the SFU glue (web/glue/cockpit-sfu.js): calls made with
// the Realtime client's `call`, results handed back by token, cancels aborting the fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadTetherModule } from '../../web/glue/load.js';
import { createCockpitRelay } from '../../web/glue/cockpit-relay.js';
import { createRobotCore, createViewerCore } from '../../web/glue/cockpit-cores.js';
import { createSfuCaller } from '../../web/glue/cockpit-sfu.js';
import { createDriver } from '../../web/glue/driver.js';

const mod = await loadTetherModule();
const file = JSON.parse(readFileSync(new URL('../../fixtures/cockpit/rtc.json', import.meta.url)));
const b64 = (s) => new Uint8Array(Buffer.from(s ?? '', 'base64'));
const toB64 = (bytes) => Buffer.from(bytes).toString('base64');

// --- the relay ----------------------------------------------------------------------------------

function relayAction(a) {
  const j = { kind: a.kind, session: a.session };
  if (a.stream) j.stream = a.stream;
  if (a.bytes) j.b64 = toB64(a.bytes);
  if (a.kind === 'open_stream')
    Object.assign(j, { ch: a.ch, delivery: a.delivery, sendOrder: a.sendOrder });
  if (a.kind === 'reset_stream') j.end = a.end;
  if (a.kind === 'close_session') Object.assign(j, { code: a.code, reason: a.reason });
  if (a.kind === 'sfu_call') Object.assign(j, { call: a.call, op: a.op, sfuSession: a.sfuSession });
  if (a.kind === 'sfu_cancel') j.call = a.call;
  return j;
}

function relayStep(relay, s) {
  const now = s.now;
  switch (s.in) {
    case 'open':
      return relay.handleSessionOpen(s.role, s.lane, now);
    case 'closed':
      return relay.handleSessionClosed(s.session, now);
    case 'control':
      return relay.handleControlData(s.session, b64(s.b64), now);
    case 'datagram':
      return relay.handleDatagram(s.session, b64(s.b64), now);
    case 'ws':
      return relay.handleWsMessage(s.session, b64(s.b64), now);
    case 'stream': {
      const st = relay.handleIncomingOpen(s.session, now);
      relay.handleIncomingData(st, b64(s.b64), now);
      return relay.handleIncomingEnd(st, now);
    }
    case 'sfu':
      return relay.handleSfuResult(s.call, s.result, now);
    case 'timeout':
      return relay.handleTimeout(now);
  }
  throw new Error(`unknown relay step ${s.in}`);
}

for (const script of file.relay) {
  test(`golden relay brokering: ${script.name}`, () => {
    const relay = createCockpitRelay(mod, { sfu: true, turn: !!script.turn });
    for (const [i, s] of script.steps.entries()) {
      const result = relayStep(relay, s);
      const actions = [];
      for (let a = relay.pollAction(); a; a = relay.pollAction()) actions.push(relayAction(a));
      const where = `${script.name} step ${i} (${s.in} at ${s.now})`;
      assert.deepEqual(actions, s.out.actions, where);
      assert.equal(relay.pollTimeout(), s.out.timeout, `${where}: timeout`);
      if ('result' in s.out) assert.equal(result, s.out.result, `${where}: result`);
    }
    relay.dispose();
  });
}

// --- the clients --------------------------------------------------------------------------------

// An action as the file pins it: the rtc arguments, which the wrapper spreads into fields, as JSON.
function clientAction(a) {
  const { kind, bytes, reason, ...args } = a;
  const j = { kind };
  if (bytes.length) j.b64 = toB64(bytes);
  if (reason) j.reason = reason;
  if (Object.keys(args).length) j.args = args;
  return j;
}
const pinnedAction = ({ json, ...rest }) => (json ? { ...rest, args: JSON.parse(json) } : rest);

function drain(core) {
  const actions = [];
  for (let a = core.pollAction(); a; a = core.pollAction()) actions.push(clientAction(a));
  const events = [];
  for (let e = core.pollEvent(); e; e = core.pollEvent()) {
    const { kind, payload, ...body } = e;
    events.push({ kind, body });
  }
  return { actions, events, timeout: core.pollTimeout() };
}

const expected = (out) => ({
  actions: out.actions.map(pinnedAction),
  events: out.events.map(({ kind, json }) => ({ kind, body: JSON.parse(json) })),
  timeout: out.timeout,
});

const common = (core, s) => {
  switch (s.in) {
    case 'start':
      return core.handleStart(s.now);
    case 'connected':
      return core.handleConnected(s.lane, s.now);
    case 'disconnected':
      return core.handleDisconnected(s.detail, s.now);
    case 'timeout':
      return core.handleTimeout(s.now);
    case 'stop':
      return core.handleStop(s.now);
    case 'rtc_state':
      return core.handleRtcState(s.state, s.now);
  }
  throw new Error(`unknown step ${s.in}`);
};

function viewerStep(v, s) {
  if (s.in === 'control') return v.handleControlData(b64(s.b64), s.now);
  if (s.in === 'watch') return v.watch(s.robotId, s.now);
  if (s.in === 'want') return v.want(s.channels, s.now);
  if (s.in === 'rtc_offer') return v.handleRtcOffer(s.sdp, s.now);
  if (s.in === 'rtc_answer') return v.handleRtcAnswer(s.sdp, s.now);
  if (s.in === 'rtc_media') return v.handleRtcMedia(s.ch, s.frames, s.now);
  return common(v, s);
}

function robotStep(r, s) {
  if (s.in === 'carrier') return r.handleCarrierData(b64(s.b64), s.now);
  if (s.in === 'datagram') return r.handleDatagram(b64(s.b64), s.now);
  if (s.in === 'rtc_offer') return r.handleRtcOffer(s.sdp, s.tracks, s.now);
  if (s.in === 'media_resumed') return r.handleMediaResumed(s.ch, s.gapMs, s.now);
  return common(r, s);
}

function replay(core, script, step) {
  for (const [i, s] of script.steps.entries()) {
    const result = step(core, s);
    const where = `${script.name} step ${i} (${s.in} at ${s.now})`;
    assert.deepEqual(drain(core), expected(s.out), where);
    if ('result' in s.out) assert.equal(result, s.out.result, `${where}: result`);
  }
}

for (const script of file.viewer) {
  test(`golden viewer WebRTC video: ${script.name}`, () => {
    const v = createViewerCore(mod);
    replay(v, script, viewerStep);
    v.dispose();
  });
}
for (const script of file.robot) {
  test(`golden robot WebRTC camera: ${script.name}`, () => {
    const r = createRobotCore(mod, script.config);
    replay(r, script, robotStep);
    r.dispose();
  });
}

// --- the SFU glue -------------------------------------------------------------------------------

test('cockpit-sfu: an sfu_call is the Realtime client call the core named, its result goes back by token, a cancel aborts it', async () => {
  const relay = createCockpitRelay(mod, { sfu: true });
  const calls = [];
  const client = {
    call(request) {
      calls.push(request);
      return new Promise((resolve) => {
        request.signal.addEventListener('abort', () =>
          resolve({ ok: false, status: 0, errorCode: 'aborted' }),
        );
        request.answer = resolve;
      });
    },
  };
  let sfu;
  const performed = [];
  const driver = createDriver(relay, {
    perform(a) {
      if (sfu.perform(a)) return;
      performed.push(a);
    },
  });
  sfu = createSfuCaller(relay, driver, client);
  const enc = (m) => {
    const t = new TextEncoder().encode(JSON.stringify(m));
    const b = new Uint8Array(4 + t.length);
    new DataView(b.buffer).setUint32(0, t.length, true);
    b.set(t, 4);
    return b;
  };
  const v = driver.input((now) => relay.handleSessionOpen('viewer', 'webtransport', now));
  driver.input((now) => relay.handleControlData(v, enc({ t: 'hello', v: 7, role: 'viewer' }), now));
  const tick = () => new Promise((r) => setTimeout(r, 10));
  driver.input((now) => relay.handleControlData(v, enc({ t: 'rtc_offer', sdp: 'v=0 x' }), now));
  await tick();
  assert.equal(calls.length, 1);
  assert.equal(calls[0].op, 'newSession');
  assert.equal(calls[0].sessionId, undefined);
  assert.deepEqual(calls[0].body, { sessionDescription: { type: 'offer', sdp: 'v=0 x' } });
  assert.equal(sfu.pending, 1);
  calls[0].answer({
    ok: true,
    status: 201,
    body: { sessionId: 'S1', sessionDescription: { type: 'answer', sdp: 'v=0 y' } },
  });
  await tick();
  assert.equal(sfu.pending, 0);
  const answer = performed.findLast((a) => a.kind === 'write_control');
  assert.match(
    new TextDecoder().decode(answer.bytes.subarray(4)),
    /"t":"rtc_answer","sdp":"v=0 y"/,
  );
  // A new offer while a call is out cancels it: the fetch is aborted and its result never lands.
  driver.input((now) => relay.handleControlData(v, enc({ t: 'rtc_offer', sdp: 'v=0 z' }), now));
  await tick();
  driver.input((now) => relay.handleControlData(v, enc({ t: 'rtc_offer', sdp: 'v=0 w' }), now));
  await tick();
  assert.equal(calls.length, 3);
  assert.equal(calls[1].signal.aborted, true);
  assert.equal(calls[2].signal.aborted, false);
  await tick();
  assert.equal(
    relay.stats().dropped.sfu_result_unknown,
    undefined,
    'the aborted result was never handed back',
  );
  sfu.close();
  assert.equal(calls[2].signal.aborted, true);
  driver.close();
  relay.dispose();
});
