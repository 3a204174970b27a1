// The runtime-independent parts of the room endpoints (web/edge/): tickets, frame and rate
// limits, principal budgets and the policy configuration, without a runtime around them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRelay, pathPrefixAcl } from '@tether-rt/tether/relay';
import { mintTicket, verifyTicket, MAX_TICKET_CHARS } from '@tether-rt/tether/tickets';
import { CLOSE, DEFAULT_LIMITS, createAdmission, resolveLimits } from '../../web/edge/limits.js';
import { buildPolicy, parsePolicyConfig } from '../../web/edge/policy.js';

const SECRET = 's'.repeat(32);
const NOW = 1_800_000_000_000;

test('tickets: round trip, and every tampering is refused with its reason', async () => {
  const t = await mintTicket(SECRET, {
    writer: 'ada',
    kind: 'agent',
    room: 'lab',
    ttlSeconds: 60,
    nowMs: NOW,
  });
  assert.deepEqual(await verifyTicket(SECRET, t, { room: 'lab', nowMs: NOW }), {
    ok: true,
    writer: 'ada',
    kind: 'agent',
    room: 'lab',
    exp: NOW / 1000 + 60,
  });
  const [v, payload, mac] = t.split('.');
  const forged = Buffer.from(
    JSON.stringify({ w: 'root', k: 'human', r: 'lab', exp: NOW / 1000 + 60 }),
  ).toString('base64url');
  const cases = [
    [`${v}.${forged}.${mac}`, 'signature'],
    [`${v}.${payload}.${mac.slice(0, -1)}A`, mac.endsWith('A') ? 'ok' : 'signature'],
    [`t2.${payload}.${mac}`, 'malformed'],
    [`${v}.${payload}`, 'malformed'],
    [`${v}.${payload}.${mac}!`, 'malformed'],
    ['', 'missing'],
    ['x'.repeat(MAX_TICKET_CHARS + 1), 'malformed'],
  ];
  for (const [ticket, reason] of cases) {
    const r = await verifyTicket(SECRET, ticket, { room: 'lab', nowMs: NOW });
    assert.equal(r.ok ? 'ok' : r.reason, reason, ticket.slice(0, 40));
  }
  assert.equal(
    (await verifyTicket(SECRET, t, { room: 'lab', nowMs: NOW + 60_000 })).reason,
    'expired',
  );
  assert.equal((await verifyTicket(SECRET, t, { room: 'other', nowMs: NOW })).reason, 'room');
  assert.equal(
    (await verifyTicket('t'.repeat(32), t, { room: 'lab', nowMs: NOW })).reason,
    'signature',
  );
  await assert.rejects(mintTicket(SECRET, { writer: 'a\u0000b', room: 'lab' }), /writer must be/);
  await assert.rejects(
    mintTicket(SECRET, { writer: 'a', room: 'lab', ttlSeconds: 1e9 }),
    /ttlSeconds/,
  );
  await assert.rejects(verifyTicket('short', t), /at least 32 characters/);
});

test('limits: defaults and close codes come from the core; configuration is checked', () => {
  // docs/rooms.md § Limits, the table.
  assert.deepEqual(DEFAULT_LIMITS, {
    maxFrameBytes: 262144,
    connectionMessagesPerSecond: 50,
    connectionBurst: 200,
    principalMessagesPerSecond: 100,
    principalBurst: 1000,
    cooldownMs: 30000,
    maxConnectionsPerRoom: 256,
    maxBufferedBytes: 4194304,
    readerBytesPerSecond: 1048576,
    requireReadAck: true,
  });
  assert.deepEqual(
    [
      CLOSE.BINARY,
      CLOSE.INVALID,
      CLOSE.EJECTED,
      CLOSE.TOO_BIG,
      CLOSE.STORAGE,
      CLOSE.RATE,
      CLOSE.BUDGET,
      CLOSE.SLOW_READER,
    ],
    [1003, 1007, 1008, 1009, 1011, 4008, 4009, 4010],
  );
  assert.equal(resolveLimits({ maxFrameBytes: 10 }).maxFrameBytes, 10);
  assert.equal(resolveLimits({}).connectionBurst, 200);
  assert.throws(() => resolveLimits({ maxFramebytes: 1 }), /unknown limit "maxFramebytes"/);
  assert.throws(() => resolveLimits({ maxFrameBytes: -1 }), /positive number/);
  assert.equal(resolveLimits({ requireReadAck: false }).requireReadAck, false);
  assert.throws(
    () => resolveLimits({ requireReadAck: 'no' }),
    /requireReadAck must be true or false, not "no"/,
  );
});

test('limits: requireReadAck on the glue: a silent reader is closed 4010, the read state resumes it', () => {
  const limits = resolveLimits({ maxBufferedBytes: 4096 });
  const adm = createAdmission(limits, null, { now: () => 0 });
  const frame = 'x'.repeat(1000);
  const silent = adm.opened('r', 'a');
  const http = adm.opened('r', 'b', { exactBuffered: true });
  for (let i = 0; i < 4; i++) {
    assert.equal(adm.send(silent, frame, false), null);
    assert.equal(adm.send(http, frame, false, 0), null);
  }
  assert.equal(adm.send(silent, frame, false)?.code, CLOSE.SLOW_READER);
  assert.equal(adm.send(http, frame, false, 0), null, 'an exact bufferedAmount decides alone');
  // Kept across a hibernation and handed back: the woken core counts on from 4000 handed.
  const kept = adm.readState(silent);
  assert.deepEqual(JSON.parse(kept), {
    sent: 4000,
    acked: 0,
    claimed: false,
    marks: [2000, 3000, 4000],
  });
  const woke = createAdmission(limits, null, { now: () => 0 });
  const again = woke.opened('r', 'a', { resumed: true, readState: kept });
  assert.equal(woke.readState(again), kept);
  assert.equal(woke.send(again, 'y'.repeat(100), false)?.code, CLOSE.SLOW_READER);
  assert.equal(woke.read(again, 2000), true, 'the mark handed before the wake-up is credited');
  assert.equal(woke.send(again, 'y'.repeat(96), false), null);
  const blind = woke.opened('r', 'c', { resumed: true });
  assert.equal(woke.send(blind, 'z', true), 'drop');
  assert.equal(woke.send(blind, 'z', false)?.code, CLOSE.SLOW_READER);
});

test('limits: frame size in UTF-8 bytes and binary frames, before the relay reads anything', () => {
  const adm = createAdmission(resolveLimits({ maxFrameBytes: 10 }), null, { now: () => 0 });
  const c = adm.opened('r', 'w');
  assert.equal(adm.frame(c, '0123456789'), null);
  assert.deepEqual(adm.frame(c, '01234567890'), {
    code: CLOSE.TOO_BIG,
    reason: 'frame larger than 10 bytes; split the write',
  });
  assert.equal(adm.frame(c, '€€€'), null); // 9 bytes
  assert.equal(adm.frame(c, '€€€€').code, CLOSE.TOO_BIG); // 4 units, 12 bytes
  assert.equal(adm.frame(c, new Uint8Array(3)).code, CLOSE.BINARY);
});

test('limits: principal budgets survive a reconnect and a restart through the store', () => {
  const saved = new Map();
  const store = {
    get: (room, w) => saved.get(`${room}/${w}`) ?? null,
    put: (room, w, s) => saved.set(`${room}/${w}`, s),
  };
  const limits = resolveLimits({
    principalMessagesPerSecond: 1,
    principalBurst: 5,
    cooldownMs: 1000,
  });
  let t = 0;
  let adm = createAdmission(limits, store, { now: () => t });
  assert.equal(adm.attempt('r', 'w'), null);
  let c = adm.opened('r', 'w');
  for (let i = 0; i < 5; i++) assert.equal(adm.frame(c, '{}'), null);
  adm.closed(c); // a reconnect does not refill it
  c = adm.opened('r', 'w');
  assert.deepEqual(adm.frame(c, '{}'), {
    code: CLOSE.BUDGET,
    reason: 'writer spent its message budget; cooling down 1 s',
  });
  t = 10;
  assert.deepEqual(adm.attempt('r', 'w'), {
    status: 429,
    message: 'writer w spent its message budget; retry after 1 s',
    retryAfter: 1,
  });
  // A restarted object (fresh memory) still knows the cooldown.
  t = 500;
  adm = createAdmission(limits, store, { now: () => t });
  assert.equal(adm.attempt('r', 'w').status, 429);
  t = 1000;
  assert.equal(adm.attempt('r', 'w'), null);
  assert.equal(adm.attempt('r', 'someone-else'), null);
  assert.equal(adm.attempt('other-room', 'w'), null);
});

test('limits: a full room answers 503 until a connection closes', () => {
  const adm = createAdmission(resolveLimits({ maxConnectionsPerRoom: 2 }), null);
  const a = adm.opened('r', 'a');
  adm.opened('r', 'b');
  assert.deepEqual(adm.attempt('r', 'c'), {
    status: 503,
    message: 'the room holds its maximum of 2 connections',
    retryAfter: 10,
  });
  adm.closed(a);
  assert.equal(adm.attempt('r', 'c'), null);
});

test('policy: the default keeps agents off the root after seq 0; rules come from JSON', () => {
  const human = { writer: 'h', kind: 'human' };
  const agent = { writer: 'a', kind: 'agent' };
  const dflt = buildPolicy(parsePolicyConfig(''), pathPrefixAcl);
  assert.equal(dflt.canWrite(agent, [], 'r', { seq: 0 }), true);
  assert.equal(dflt.canWrite(agent, [], 'r', { seq: 3 }), false);
  assert.equal(dflt.canWrite(agent, ['x'], 'r', { seq: 3 }), true);
  assert.equal(dflt.canWrite(human, [], 'r', { seq: 3 }), true);
  const cfg = parsePolicyConfig(
    '{"rules":[{"prefix":["notes"],"allow":["human","agent"]},{"prefix":["cases","*","plan"],"allow":["human"]}]}',
  );
  const p = buildPolicy(cfg, pathPrefixAcl);
  assert.equal(p.canWrite(agent, ['notes', 'a'], 'r', { seq: 3 }), true);
  assert.equal(p.canWrite(agent, ['cases', 7, 'plan'], 'r', { seq: 3 }), false);
  assert.equal(p.canWrite(human, ['cases', 7, 'plan'], 'r', { seq: 3 }), true);
  assert.equal(p.canWrite(human, ['elsewhere'], 'r', { seq: 3 }), false);
  assert.equal(
    p.canWrite({ writer: 'x', kind: 'replay', replay: true }, ['elsewhere'], 'r', { seq: 3 }),
    true,
  );
  // agentRoot "rules" hands the ACL to the core unwrapped (no JS call per op).
  const native = buildPolicy(parsePolicyConfig({ ...cfg, agentRoot: 'rules' }), pathPrefixAcl);
  assert.ok(Object.getOwnPropertySymbols(native).length > 0);
  assert.ok(createRelay({ policy: native }));
  assert.throws(
    () => parsePolicyConfig('{"rules":[{"prefix":"notes","allow":["human"]}]}'),
    /prefix must be an array/,
  );
  assert.throws(
    () => parsePolicyConfig('{"rules":[{"prefix":[],"allow":["robot"]}]}'),
    /allow must list/,
  );
  assert.throws(() => parsePolicyConfig('{"agentRoot":"maybe"}'), /agentRoot/);
  assert.throws(() => parsePolicyConfig('{'), /not JSON/);
});
