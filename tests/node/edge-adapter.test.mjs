// The runtime-independent parts of the room endpoints (web/edge/): tickets, frame and rate
// limits, principal budgets and the policy configuration, without a runtime around them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRelay, pathPrefixAcl } from '@tether-rt/tether/relay';
import { mintTicket, verifyTicket, MAX_TICKET_CHARS } from '@tether-rt/tether/tickets';
import {
  CLOSE,
  PrincipalBudgets,
  TokenBucket,
  checkFrame,
  resolveLimits,
} from '../../web/edge/limits.js';
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

test('limits: frame size in UTF-8 bytes, binary frames, config validation', () => {
  const l = resolveLimits({ maxFrameBytes: 10 });
  assert.equal(checkFrame('0123456789', l), null);
  assert.equal(checkFrame('01234567890', l).code, CLOSE.TOO_BIG);
  assert.equal(checkFrame('€€€', l), null); // 9 bytes
  assert.equal(checkFrame('€€€€', l).code, CLOSE.TOO_BIG); // 4 units, 12 bytes
  assert.equal(checkFrame(new Uint8Array(3), l).code, CLOSE.BINARY);
  assert.throws(() => resolveLimits({ maxFramebytes: 1 }), /unknown limit "maxFramebytes"/);
  assert.throws(() => resolveLimits({ maxFrameBytes: -1 }), /positive number/);
});

test('limits: token bucket and principal budgets that survive a reconnect and a restart', () => {
  const b = new TokenBucket(10, 3, 0);
  assert.deepEqual([b.take(0), b.take(0), b.take(0), b.take(0)], [true, true, true, false]);
  assert.equal(b.take(100), true); // 100 ms at 10/s refills one
  const saved = new Map();
  const persist = { get: (w) => saved.get(w) ?? null, put: (w, s) => saved.set(w, s) };
  const limits = resolveLimits({
    principalMessagesPerSecond: 1,
    principalBurst: 5,
    cooldownMs: 1000,
  });
  let budgets = new PrincipalBudgets(limits, persist);
  budgets.opened('w', 0);
  for (let i = 0; i < 5; i++) assert.equal(budgets.take('w', 0), true);
  budgets.closed('w', 0); // a reconnect does not refill it
  budgets.opened('w', 0);
  assert.equal(budgets.take('w', 0), false);
  assert.equal(budgets.cooldown('w', 10), 990);
  // A restarted object (fresh memory) still knows the cooldown.
  budgets = new PrincipalBudgets(limits, persist);
  assert.equal(budgets.cooldown('w', 500), 500);
  assert.equal(budgets.cooldown('w', 1000), 0);
  assert.equal(budgets.cooldown('someone-else', 500), 0);
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
