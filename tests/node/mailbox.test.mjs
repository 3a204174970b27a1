// The mailbox core through its WASM build and glue (web/glue/mailbox.js), and the one endpoint
// module both hosts share (web/edge/mailbox-host.js) under the one driver: the same core
// decisions as the native suite reach JS intact, the host hands out responses and reader pushes
// in order, rebuilds after a failed write, and the shipped .d.ts matches the runtime.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadMailbox } from '@tether-rt/tether/mailbox';
import { MailboxHost } from '../../web/edge/mailbox-host.js';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));
const api = await loadMailbox();
const enc = new TextEncoder();
const DAY = 24 * 60 * 60 * 1000;

/** Storage as a map, with the MailboxStore interface (load / apply); `failing` throws on apply. */
function memoryStore() {
  const rows = new Map();
  return {
    rows,
    failing: false,
    load: () => [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
    apply(mailbox, puts, deletes) {
      if (this.failing) throw new Error('injected: disk full');
      for (const [k, v] of puts) rows.set(k, v);
      for (const k of deletes) rows.delete(k);
      return Promise.resolve();
    },
  };
}

function makeHost(store, clock) {
  const timers = [];
  const host = new MailboxHost({
    api,
    store,
    mailbox: '',
    now: () => clock.now,
    setTimer: (fn, ms) => timers.push({ fn, at: clock.now + ms }),
    clearTimer: () => {},
    log: () => {},
  });
  return { host, timers };
}

const request = (host, method, target, { auth = '', body } = {}) =>
  host.request({
    method,
    target,
    authorization: auth,
    body: body === undefined ? new Uint8Array(0) : enc.encode(JSON.stringify(body)),
    entropy: api.entropy(),
  });

async function mailboxWithSender(host) {
  const made = await request(host, 'POST', '/mailboxes');
  assert.equal(made.status, 201);
  const { mailbox, ownerKey } = JSON.parse(made.body);
  const owner = `Bearer ${ownerKey}`;
  const base = `/mailboxes/${mailbox}`;
  const { code } = JSON.parse((await request(host, 'POST', `${base}/codes`, { auth: owner })).body);
  const paired = JSON.parse(
    (await request(host, 'POST', `${base}/pairs`, { body: { name: 'bob', code } })).body,
  );
  return { mailbox, owner, base, sender: `Bearer ${paired.senderKey}` };
}

test('glue: limits, the documented errors, and the front door decide before any body is read', () => {
  assert.equal(api.limits.retentionMs, 7 * DAY);
  assert.ok(api.limits.maxRequestBytes > api.limits.maxTextBytes);
  assert.equal(api.entropy().length, api.limits.entropyBytes);
  assert.deepEqual(api.errors.oversize.status, 413);
  assert.match(api.errors.unpaired_sender.fix, /pair/);
  const big = api.frontDoor(
    'POST',
    `/mailboxes/${'a'.repeat(32)}/messages`,
    api.limits.maxRequestBytes + 1,
    false,
  );
  assert.equal(big.ok, false);
  assert.equal(big.error, 'oversize');
  assert.equal(JSON.parse(big.body).limit, api.limits.maxRequestBytes);
  assert.equal(
    api.frontDoor('GET', `/mailboxes/${'a'.repeat(32)}/stream`, -1, false).error,
    'upgrade_required',
  );
  assert.deepEqual(api.frontDoor('GET', `/mailboxes/${'a'.repeat(32)}`, -1, false), {
    ok: true,
    route: 'info',
    mailbox: 'a'.repeat(32),
  });
  assert.equal(api.frontDoor('GET', '/mailboxes/nope', -1, false).error, 'unknown_mailbox');
  const e = api.errorResponse('storage_failed', 'disk gone', 1500);
  assert.equal(e.status, 503);
  assert.equal(JSON.parse(e.body).retryAfterMs, 1500);
});

test('glue: a create makes the id the host computed from the same entropy', async () => {
  const core = api.createCore();
  core.loaded(0);
  const entropy = api.entropy();
  core.handleRequest(1, { method: 'POST', target: '/mailboxes', entropy }, 5);
  const persist = core.pollAction();
  assert.equal(persist.kind, 'persist');
  assert.deepEqual(
    persist.puts.map(([k]) => k),
    ['meta'],
  );
  assert.equal(core.pollAction(), null); // the response waits for the write
  core.handlePersisted(persist.token, true, 5);
  const r = core.pollAction();
  assert.equal(r.kind, 'respond');
  assert.equal(JSON.parse(r.body).mailbox, api.mailboxIdFor(entropy));
  assert.equal(core.info().id, api.mailboxIdFor(entropy));
  assert.deepEqual(Object.keys(core.snapshot()), ['meta']);
  core.dispose();
});

test('host: a request gets its answer, storage holds the core, a reader gets pushes queued before its socket', async () => {
  const store = memoryStore();
  const clock = { now: 1_000 };
  const { host } = makeHost(store, clock);
  const m = await mailboxWithSender(host);
  const sent = await request(host, 'POST', `${m.base}/messages`, {
    auth: m.sender,
    body: { id: 'm1', text: 'hi' },
  });
  assert.equal(sent.status, 201);
  assert.deepEqual(host.core.snapshot(), Object.fromEntries(store.rows));
  const accepted = await request(host, 'GET', `${m.base}/stream?since=0`, { auth: m.owner });
  assert.ok(typeof accepted.accept === 'number');
  const frames = [];
  host.attachReader(accepted.accept, { send: (t) => frames.push(JSON.parse(t)), close() {} });
  assert.deepEqual(
    frames.map((f) => f.t),
    ['message', 'ready'],
  );
  await request(host, 'POST', `${m.base}/messages`, {
    auth: m.sender,
    body: { id: 'm2', text: 'live' },
  });
  assert.equal(frames.at(-1).message.text, 'live');
  host.readerClosed(accepted.accept);
  assert.equal(host.info().readers, 0);
});

test('host: the timer the driver asks for is the next expiry, and firing it deletes the text', async () => {
  const store = memoryStore();
  const clock = { now: 50_000 };
  const { host, timers } = makeHost(store, clock);
  const m = await mailboxWithSender(host);
  await request(host, 'POST', `${m.base}/messages`, {
    auth: m.sender,
    body: { id: 'm1', text: 'week' },
  });
  assert.equal(host.core.pollTimeout(), 50_000 + 7 * DAY); // the code was used: the text is next
  clock.now = 50_000 + 7 * DAY;
  timers.at(-1).fn();
  assert.equal(host.info().storedMessages, 0);
  assert.ok(!JSON.stringify([...store.rows.values()]).includes('week'));
});

test('host: a failed write answers storage_failed and the next request rebuilds the core from storage', async () => {
  const store = memoryStore();
  const clock = { now: 1_000 };
  const { host } = makeHost(store, clock);
  const m = await mailboxWithSender(host);
  await request(host, 'POST', `${m.base}/messages`, {
    auth: m.sender,
    body: { id: 'kept', text: 'a' },
  });
  store.failing = true;
  const failed = await request(host, 'POST', `${m.base}/messages`, {
    auth: m.sender,
    body: { id: 'lost', text: 'b' },
  });
  assert.equal(failed.status, 503);
  assert.equal(JSON.parse(failed.body).error, 'storage_failed');
  store.failing = false;
  const list = await request(host, 'GET', `${m.base}/messages`, { auth: m.owner });
  assert.deepEqual(
    JSON.parse(list.body).messages.map((x) => x.id),
    ['kept'],
  );
  assert.equal(
    (
      await request(host, 'POST', `${m.base}/messages`, {
        auth: m.sender,
        body: { id: 'lost', text: 'b' },
      })
    ).status,
    201,
  );
  assert.deepEqual(host.core.snapshot(), Object.fromEntries(store.rows));
});

test('tsc: a consumer of tether/mailbox type-checks, and the declared unions equal the runtime sets', (t) => {
  const tsc = (args) => {
    const r = spawnSync(process.execPath, [join(repoDir, 'node_modules/.bin/tsc'), ...args], {
      cwd: repoDir,
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
  };
  tsc(['--noEmit', '-p', 'tests/node/tsconfig.mailbox-types.json']);
  const exact = (keys, type) =>
    `export const runtime_${type.replace(/\W/g, '_')} = ${JSON.stringify(Object.fromEntries(keys.map((k) => [k, true])))} satisfies Record<${type}, true>;`;
  const dir = mkdtempSync(join(tmpdir(), 'tether-mailbox-types-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'runtime-sets.ts'),
    [
      `import type { MailboxErrorCode, MailboxLimits, MailboxApi } from ${JSON.stringify(join(repoDir, 'web/glue/mailbox.js'))};`,
      exact(Object.keys(api.errors), 'MailboxErrorCode'),
      exact(Object.keys(api.limits), 'keyof MailboxLimits'),
      exact(Object.keys(api), 'keyof MailboxApi'),
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
      },
      files: ['runtime-sets.ts'],
    }),
  );
  tsc(['-p', join(dir, 'tsconfig.json')]);
});

test('docs/mailbox.md lists every documented error with the status the core answers', async () => {
  const { readFileSync } = await import('node:fs');
  const doc = readFileSync(join(repoDir, 'docs/mailbox.md'), 'utf8');
  const rows = new Map(
    [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]),
  );
  assert.deepEqual(
    [...rows.keys()].sort(),
    Object.keys(api.errors).sort(),
    'the errors table and the core disagree on the set of codes',
  );
  for (const [code, { status }] of Object.entries(api.errors))
    assert.equal(rows.get(code), status, code);
});

test('fixtures: the WASM build replays the recorded conversation action for action', async () => {
  const { readFileSync } = await import('node:fs');
  const f = JSON.parse(readFileSync(join(repoDir, 'fixtures/mailbox/conversation.json'), 'utf8'));
  assert.ok(f.steps.length >= 20);
  const core = api.createCore();
  core.loaded(0);
  f.steps.forEach((step, i) => {
    let now;
    if ('timeout' in step) {
      now = step.timeout;
      core.handleTimeout(now);
    } else {
      const r = step.request;
      now = r.now;
      core.handleRequest(
        r.id,
        {
          method: r.method,
          target: r.target,
          authorization: r.authorization,
          body: enc.encode(r.body),
          entropy: Uint8Array.from(Buffer.from(r.entropy, 'hex')),
        },
        now,
      );
    }
    const got = [];
    for (let a = core.pollAction(); a; a = core.pollAction()) {
      got.push(a);
      if (a.kind === 'persist') core.handlePersisted(a.token, true, now);
    }
    assert.deepEqual(got, step.actions, `step ${i}`);
  });
  assert.deepEqual(core.snapshot(), f.records);
  core.dispose();
});
