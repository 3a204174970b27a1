// The agent's on-disk mailbox through the real CLI (no sidecar needed): read --take/--peek,
// invalid counts, malformed records left alone, concurrent readers, prune-archive preview vs
// apply, shared-folder containment, and wake hooks (environment, validation, rate limit).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeEnvelope, useBus } from '../../web/agent/envelope.js';
import { ensureDirs, recordName, writeAtomic } from '../../web/agent/store.js';
import { WakeHook, validateWakeOptions } from '../../web/agent/wake.js';
import { Harness, waitFor } from './lib/agent-harness.mjs';

const FROM = { streamId: 'bob', role: 'agent', name: 'Bob', instanceId: 'inst-1' };
await useBus(); // envelopes are built and checked by the bus core, as the sidecar does

/** Stores `n` inbox records the way the sidecar does; returns their envelope ids in order. */
function fill(dir, n, { into = 'inbox', receivedAt = () => Date.now() } = {}) {
  const d = ensureDirs(dir);
  const ids = [];
  for (let i = 0; i < n; i++) {
    const { env } = makeEnvelope({
      from: FROM,
      type: 'chat',
      to: 'alice',
      payload: { text: `m${i}` },
    });
    writeAtomic(
      path.join(d[into], recordName(env)),
      JSON.stringify({ v: 1, kind: 'inbox', receivedAt: receivedAt(i), envelope: env }),
    );
    ids.push(env.id);
  }
  return ids;
}

const idsOf = (r) => r.messages.map((m) => m.envelope.id);

test('read: --take N, --take 0 consumes nothing, --peek leaves mail, invalid counts fail naming the range', async (t) => {
  const h = new Harness(t);
  const A = h.dir('alice');
  const ids = fill(A, 5);
  assert.deepEqual(idsOf(await h.ok(A, ['read', '--take', '0'])), []);
  assert.equal((await h.ok(A, ['notify'])).unread, 5);
  assert.deepEqual(idsOf(await h.ok(A, ['read', '--peek', '--take', '3'])), ids.slice(0, 3));
  assert.deepEqual(idsOf(await h.ok(A, ['read', '--peek'])), ids);
  assert.equal((await h.ok(A, ['notify'])).unread, 5);
  assert.deepEqual(idsOf(await h.ok(A, ['read', '--take', '2'])), ids.slice(0, 2));
  assert.deepEqual(idsOf(await h.ok(A, ['read'])), ids.slice(2));
  assert.equal((await h.ok(A, ['notify'])).unread, 0);
  assert.equal(fs.readdirSync(path.join(A, 'archive')).length, 5);
  for (const bad of ['-1', '1.5', 'abc', '1001', '', '0x10']) {
    const r = await h.run(A, ['read', `--take=${bad}`], { json: false });
    assert.equal(r.code, 2, `--take ${bad}`);
    assert.match(r.stderr, /--take must be a whole number from 0 to 1000/);
  }
});

test('malformed records stay on disk, are skipped by reads and are not counted', async (t) => {
  const h = new Harness(t);
  const A = h.dir('alice');
  const [good] = fill(A, 1);
  const d = ensureDirs(A);
  const { env } = makeEnvelope({ from: FROM, type: 'chat', to: 'alice', payload: { text: 'x' } });
  const bad = {
    [`0000000000000001-${'0'.repeat(32)}.json`]: '{"v":1,"kind":"inbox","envelope":', // truncated
    [`0000000000000002-${'1'.repeat(32)}.json`]: JSON.stringify({
      v: 1,
      kind: 'inbox',
      receivedAt: 1,
      envelope: env,
    }), // name/hash mismatch
    [recordName({ ...env, id: 'forged' })]: JSON.stringify({
      v: 1,
      kind: 'inbox',
      receivedAt: 1,
      envelope: { ...env, id: 'forged', from: { streamId: 'x'.repeat(129), instanceId: 'i' } },
    }), // bounds
    [recordName({ ...env, id: 'nul' })]: '\u0000\u0001binary',
  };
  for (const [n, body] of Object.entries(bad)) fs.writeFileSync(path.join(d.inbox, n), body);
  // The outbox: a cached direct whose action disagrees with its envelope is malformed too.
  const { env: o } = makeEnvelope({
    from: FROM,
    type: 'chat',
    to: 'carol',
    payload: { text: 'q' },
  });
  fs.writeFileSync(
    path.join(d.outbox, recordName(o)),
    JSON.stringify({ v: 1, kind: 'outbox', to: 'dave', type: 'chat', id: o.id, envelope: o }),
  );
  const n = await h.ok(A, ['notify']);
  assert.equal(n.unread, 1);
  assert.equal(n.queued, 0);
  assert.deepEqual(n.malformed, { inbox: 4, outbox: 1 });
  assert.deepEqual(idsOf(await h.ok(A, ['read'])), [good]);
  for (const name of Object.keys(bad))
    assert.ok(fs.existsSync(path.join(d.inbox, name)), `${name} left in place`);
  assert.deepEqual(idsOf(await h.ok(A, ['read'])), []);
});

test('concurrent readers return only the records they claim', async (t) => {
  const h = new Harness(t);
  const A = h.dir('alice');
  const ids = fill(A, 300);
  const runs = await Promise.all(
    Array.from({ length: 5 }, () => h.ok(A, ['read', '--take', '1000'])),
  );
  const all = runs.flatMap(idsOf);
  assert.equal(all.length, 300, 'every record returned once');
  assert.equal(new Set(all).size, 300, 'no record returned twice');
  assert.deepEqual([...all].sort(), [...ids].sort());
  for (const r of runs) {
    const mine = idsOf(r);
    assert.deepEqual(
      mine,
      ids.filter((id) => mine.includes(id)),
      'each reader sees its claims in order',
    );
  }
  assert.equal(fs.readdirSync(path.join(A, 'archive')).length, 300);
});

test('prune-archive previews by default and deletes only with --apply and an explicit limit', async (t) => {
  const h = new Harness(t);
  const A = h.dir('alice');
  const day = 86_400_000;
  const now = Date.now();
  const archived = fill(A, 6, {
    into: 'archive',
    receivedAt: (i) => now - (6 - i) * day + day / 2,
  }); // 5.5..0.5 days old
  const unread = fill(A, 2, { receivedAt: () => now - 30 * day });
  const d = ensureDirs(A);
  const junk = `0000000000000000-${'f'.repeat(32)}.json`;
  fs.writeFileSync(path.join(d.archive, junk), 'not json');

  const preview = await h.ok(A, ['prune-archive']);
  assert.equal(preview.preview, true);
  assert.equal(preview.archived, 6);
  assert.equal(preview.malformed, 1);
  assert.equal(preview.wouldDelete, 0);
  const p2 = await h.ok(A, ['prune-archive', '--older-than', '3d']);
  assert.equal(p2.wouldDelete, 3, 'older than 3 days: 5.5, 4.5 and 3.5 days old');
  assert.equal(fs.readdirSync(d.archive).length, 7, 'a preview deletes nothing');
  const noLimit = await h.run(A, ['prune-archive', '--apply'], { json: false });
  assert.equal(noLimit.code, 2);
  assert.match(noLimit.stderr, /--apply needs a limit: --older-than DURATION and\/or --keep N/);
  assert.equal((await h.run(A, ['prune-archive', '--older-than', '7'], { json: false })).code, 2);

  // Receiver dedup markers go only once their handoff expired a day ago (no sender retries then).
  const marker = (name, expiresAt) =>
    fs.writeFileSync(
      path.join(d.handoffsIn, name),
      JSON.stringify({ v: 1, kind: 'handoff-received', key: name, expiresAt }),
    );
  marker('old.json', now - 2 * day);
  marker('live.json', now + day);
  assert.equal((await h.ok(A, ['prune-archive'])).staleHandoffMarkers, 1);
  const applied = await h.ok(A, ['prune-archive', '--older-than', '3d', '--apply']);
  assert.equal(applied.deleted, 3);
  assert.equal(applied.handoffMarkers, 1);
  assert.deepEqual(fs.readdirSync(d.handoffsIn), ['live.json']);
  const kept = await h.ok(A, ['prune-archive', '--keep', '1', '--apply']);
  assert.equal(kept.deleted, 2);
  const left = fs.readdirSync(d.archive).sort();
  assert.equal(left.length, 2);
  assert.ok(left.includes(junk), 'malformed archive record untouched');
  assert.ok(
    left.some((n) => fs.readFileSync(path.join(d.archive, n), 'utf8').includes(archived[5])),
    'the newest kept',
  );
  assert.deepEqual(
    idsOf(await h.ok(A, ['read', '--peek'])),
    unread,
    'unread mail untouched, however old',
  );
});

test('share listings keep real-path containment: escaping, broken and looping links are omitted, the listing goes on', async (t) => {
  const h = new Harness(t);
  const A = h.dir('alice');
  const root = h.dir('shared');
  const outside = h.dir('outside');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'no');
  fs.mkdirSync(path.join(root, 'docs'));
  fs.writeFileSync(path.join(root, 'docs', 'a.txt'), 'hello');
  fs.writeFileSync(path.join(root, 'b.bin'), Buffer.alloc(10));
  fs.symlinkSync(path.join(root, 'docs', 'a.txt'), path.join(root, 'link-in.txt')); // inside: kept
  fs.symlinkSync(path.join(root, 'docs'), path.join(root, 'docs-link')); // directory link inside: kept
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'escape.txt')); // escapes
  fs.symlinkSync(outside, path.join(root, 'escape-dir')); // escapes
  fs.symlinkSync(path.join(root, 'nope'), path.join(root, 'broken')); // broken
  fs.symlinkSync('..', path.join(root, 'docs', 'up')); // back to the root: a loop, not an escape
  await h.ok(A, ['share', 'add', 'proj', root]);
  assert.deepEqual(Object.keys((await h.ok(A, ['share', 'list'])).shares), ['proj']);
  const ls = await h.ok(A, ['share', 'ls', 'proj']);
  const paths = ls.entries.map((e) => e.path);
  for (const p of ['b.bin', 'docs', 'docs/a.txt', 'docs-link', 'link-in.txt'])
    assert.ok(paths.includes(p), p);
  for (const p of ['escape.txt', 'escape-dir', 'broken'])
    assert.ok(!paths.includes(p), `${p} omitted`);
  const reasons = Object.fromEntries(ls.omitted.map((o) => [o.path, o.reason]));
  assert.equal(reasons['escape.txt'], 'leads outside the share');
  assert.equal(reasons['escape-dir'], 'leads outside the share');
  assert.equal(reasons.broken, 'broken link');
  assert.equal(ls.entries.find((e) => e.path === 'link-in.txt').size, 5);
  // Asking for a path through an escaping link fails cleanly, naming why.
  const esc = await h.run(A, ['share', 'ls', 'proj', 'escape-dir'], { json: false });
  assert.equal(esc.code, 2);
  assert.match(esc.stderr, /leads outside the share/);
  const up = await h.run(A, ['share', 'ls', 'proj', '../outside'], { json: false });
  assert.match(up.stderr, /outside the share/);
  assert.deepEqual(
    (await h.ok(A, ['share', 'ls', 'proj', 'docs'])).entries.map((e) => e.path).sort(),
    ['docs/a.txt', 'docs/up'],
  );
  assert.equal((await h.run(A, ['share', 'add', '../x', root], { json: false })).code, 2);
});

test('wake hooks: validated and captured at construction; 0 disables the rate limit; a limit coalesces', async (t) => {
  assert.throws(
    () => validateWakeOptions({ command: 'true', minIntervalMs: -1 }),
    /from 0 to 86400000.*--wake-min-interval-ms/,
  );
  assert.throws(() => validateWakeOptions({ command: 'true', delayMs: 1.5 }), /--wake-delay-ms/);
  assert.throws(() => validateWakeOptions({ command: ' ' }), /--wake/);
  const opts = { command: 'true', minIntervalMs: 60_000, delayMs: 0 };
  const out = path.join(new Harness(t).dir('wake'), 'runs');
  const opts2 = { command: `echo run >> '${out}'`, minIntervalMs: 60_000 };
  const hook = new WakeHook(opts2, { room: 'lab' });
  opts2.minIntervalMs = 0; // captured at construction: no effect
  opts.minIntervalMs = 0;
  assert.equal(hook.config.minIntervalMs, 60_000);
  hook.trigger();
  hook.trigger();
  hook.trigger();
  await waitFor('one run finished', () => hook.stats.runs === 1 && hook.stats.lastExit === 0);
  assert.equal(hook.stats.coalesced, 2, 'the other two wait for the interval, as one run');
  assert.equal(fs.readFileSync(out, 'utf8'), 'run\n');
  hook.close();

  const free = new WakeHook({ command: `echo run >> '${out}'`, minIntervalMs: 0 }, { room: 'lab' });
  for (let i = 0; i < 3; i++) {
    free.trigger();
    await waitFor(`run ${i + 2}`, () => free.stats.runs === i + 1 && free.stats.lastExit === 0);
  }
  assert.equal(
    fs.readFileSync(out, 'utf8'),
    'run\n'.repeat(4),
    'with 0, every trigger after the last run runs',
  );
  free.close();
});

test('a sidecar wake hook runs on new mail with TETHER_WAKE_ROOM and without the inherited TETHER_ROOM', async (t) => {
  const { startRoomServer } = await import('../e2e/lib/room_server.mjs'); // the only part needing WASM
  const server = await startRoomServer();
  t.after(() => server.close());
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  const envOut = path.join(h.base, 'wake-env');
  const bad = await h.run(
    B,
    [
      'join',
      '--relay',
      server.url,
      '--room',
      'lab',
      '--id',
      'bob',
      '--wake',
      'true',
      '--wake-min-interval-ms=-5',
    ],
    { json: false },
  );
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--wake-min-interval-ms must be a whole number of milliseconds/);
  await h.join(A, 'alice', server.url);
  await h.join(
    B,
    'bob',
    server.url,
    [
      '--wake',
      `echo "$TETHER_WAKE_ROOM \${TETHER_ROOM-unset} $TETHER_WAKE_DIR" >> '${envOut}'`,
      '--wake-min-interval-ms',
      '0',
    ],
    { env: { TETHER_ROOM: 'outer-room' } },
  );
  await h.ok(A, ['send', 'bob', 'wake up']);
  await waitFor(
    'first wake',
    () => fs.existsSync(envOut) && fs.readFileSync(envOut, 'utf8').split('\n').length === 2,
  );
  await h.ok(A, ['send', 'bob', 'again']);
  await waitFor('second wake', () => fs.readFileSync(envOut, 'utf8').split('\n').length === 3);
  assert.deepEqual(fs.readFileSync(envOut, 'utf8').trim().split('\n'), [
    `lab unset ${B}`,
    `lab unset ${B}`,
  ]);
  const st = await h.ok(B, ['status']);
  assert.equal(st.wake.minIntervalMs, 0);
  assert.equal(st.wake.stats.runs, 2);
  await h.ok(B, ['leave']);
  await h.ok(A, ['leave']);
});
