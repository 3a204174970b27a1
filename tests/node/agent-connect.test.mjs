// `tether agent join` against the real self-hosted room relay (web/host/rooms.js under Deno) with
// real tickets: two agents get in and talk; every way of not getting in is named with the
// relay's actual answer and the right exit code; and no ticket ever shows up in any output, log
// or state file (only the 0600 `ticket` file holds it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { mintTicket } from '../../web/edge/tickets.js';
import { Harness, alive, waitFor } from './lib/agent-harness.mjs';
import { freePort, startRoomsRelay } from './lib/rooms-relay.mjs';

const SECRET = 'agent-connect-secret-0123456789abcdef0123';
const ticket = (id, extra = {}) =>
  mintTicket(extra.secret ?? SECRET, { writer: id, kind: 'agent', room: 'lab', ...extra });

/** `join` without --json, returning the run. */
const join = (h, dir, id, url, extra = [], opts = {}) =>
  h.run(dir, ['join', '--relay', url, '--room', 'lab', '--id', id, ...extra], {
    json: false,
    ...opts,
  });

const sidecarLog = (dir) => fs.readFileSync(path.join(dir, 'sidecar.log'), 'utf8');

test('two agents with real tickets on the Deno relay talk; the ticket is never printed, logged or handed to a wake hook', async (t) => {
  const relay = await startRoomsRelay(t, { secret: SECRET });
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  const [ta, tb] = [await ticket('alice'), await ticket('bob')];

  const ja = await join(h, A, 'alice', relay.url, ['--ticket', ta]);
  assert.equal(ja.code, 0, ja.stderr);
  assert.match(
    ja.stdout,
    /^joined room 'lab' as 'alice' \(sidecar pid \d+; 0 other peer\(s\) online\)/,
  );
  // Bob's ticket comes from the environment; his wake hook dumps the environment it gets.
  const wakeEnv = path.join(B, 'wake-env.txt');
  const jb = await join(h, B, 'bob', relay.url, ['--wake', `env > '${wakeEnv}'`], {
    env: { TETHER_TICKET: tb },
  });
  assert.equal(jb.code, 0, jb.stderr);
  h.trackSidecar(A);
  h.trackSidecar(B);
  assert.equal(fs.statSync(path.join(A, 'ticket')).mode & 0o777, 0o600);
  assert.ok(!fs.readFileSync(path.join(A, 'config.json'), 'utf8').includes('ticket'));

  await waitFor('alice sees bob', async () =>
    (await h.ok(A, ['peers'])).peers.some((p) => p.id === 'bob' && p.open),
  );
  const st = await h.run(A, ['status'], { json: false });
  assert.match(
    st.stdout,
    /^'alice' in room 'lab' via ws:\/\/127\.0\.0\.1:\d+\/: connected; 1 peer\(s\)/,
  );
  assert.equal((await h.ok(A, ['status'])).relay, relay.url);
  assert.equal((await h.ok(A, ['send', 'bob', 'hello', 'bob'])).state, 'sent');
  await waitFor('bob has it', async () => (await h.ok(B, ['notify'])).unread === 1);
  const read = await h.run(B, ['read'], { json: false });
  assert.match(read.stdout, /\] alice chat [\w-]+: hello bob$/m);
  await waitFor('the wake hook ran', () => fs.existsSync(wakeEnv) && fs.statSync(wakeEnv).size);
  assert.doesNotMatch(fs.readFileSync(wakeEnv, 'utf8'), /^TETHER_TICKET=/m);

  // A ticket inside --relay is taken out of the settings; a malformed one is masked in the error.
  const C = h.dir('carol');
  const tc = await ticket('carol');
  const jc = await join(h, C, 'carol', `${relay.url}?ticket=${tc}`);
  assert.equal(jc.code, 0, jc.stderr);
  h.trackSidecar(C);
  assert.equal((await h.ok(C, ['status'])).relay, relay.url);
  assert.equal(fs.readFileSync(path.join(C, 'ticket'), 'utf8').trim(), tc);
  const bad = await join(h, h.dir('dan'), 'dan', `ws//127.0.0.1/?ticket=${tc}`);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /--relay must be a ws:\/\/ or wss:\/\/ URL \(got 'ws\/\/127\.0\.0\.1\/\?ticket=<ticket …\S{4}>'\)/,
  );

  for (const d of [A, B, C]) await h.ok(d, ['leave']);
  for (const [secret, own] of [
    [ta, A],
    [tb, B],
    [tc, C],
  ])
    h.assertNoSecret(secret, {
      extra: [relay.output()],
      allowedFiles: [path.join(own, 'ticket')],
    });
});

test('every way the relay turns us away is named; join exits 3 and stops the sidecar', async (t) => {
  const relay = await startRoomsRelay(t, { secret: SECRET });
  const h = new Harness(t);
  const wrongSecret = await ticket('carol', { secret: 'not-the-relays-secret-0123456789abcdef' });
  const otherRoom = await ticket('carol', { room: 'other' });
  const expired = await ticket('carol', { ttlSeconds: 1, nowMs: Date.now() - 3_600_000 });
  const good = await ticket('carol');
  const cases = [
    [
      'bad signature',
      relay.url,
      ['--ticket', wrongSecret],
      /HTTP 401 signature\): bad signature: the ticket was not signed with this relay's TICKET_SECRET/,
    ],
    [
      'expired',
      relay.url,
      ['--ticket', expired],
      /HTTP 401 expired\): the ticket has expired; mint a fresh one, then `tether agent join --ticket NEW`/,
    ],
    [
      'other room',
      relay.url,
      ['--ticket', otherRoom],
      /HTTP 401 room\): the ticket is for room "other", not "lab"/,
    ],
    [
      'no ticket',
      relay.url,
      [],
      /HTTP 401 missing\): this relay needs a ticket: .*--ticket TICKET.*`tether rooms ticket --room ROOM --id ID`/,
    ],
    [
      'wrong path',
      `${relay.url}api/`,
      ['--ticket', good],
      /no room endpoint at \/api\/rooms\/lab \(HTTP 404: "tether rooms: connect a WebSocket to \/rooms\/<name>\?ticket=<ticket>"\); --relay is the relay's base URL/,
    ],
    [
      'wss to a ws relay',
      relay.url.replace('ws:', 'wss:'),
      ['--ticket', good],
      /TLS handshake with 127\.0\.0\.1:\d+ failed \(EPROTO: wrong version number\)/,
    ],
  ];
  for (const [what, url, extra, want] of cases) {
    const dir = h.dir(what.replace(/ /g, '-'));
    const r = await join(h, dir, 'carol', url, extra);
    assert.equal(r.code, 3, `${what}: ${r.stderr}${r.stdout}`);
    const line = r.stderr.trim();
    assert.equal(line.split('\n').length, 1, `${what}: one line`);
    assert.match(line, /^tether agent join: cannot join room 'lab' via /, what);
    assert.match(line, want, what);
    assert.match(line, /\(the sidecar was stopped; log: .*sidecar\.log\)$/, what);
    assert.ok(!fs.existsSync(path.join(dir, 'sidecar.lock')), `${what}: the sidecar is gone`);
    const pid = Number(/sidecar (\d+) for 'carol'/.exec(sidecarLog(dir))?.[1]);
    assert.ok(pid > 0 && !alive(pid), `${what}: pid ${pid} stopped`);
    assert.match(sidecarLog(dir), want, `${what}: the log names it too`);
  }
  for (const secret of [wrongSecret, otherRoom, expired, good])
    h.assertNoSecret(secret, {
      extra: [relay.output()],
      allowedFiles: fs.readdirSync(h.base).map((d) => path.join(h.base, d, 'ticket')),
    });
});

test('a relay that is not up yet: join waits, exits 0 saying why; status names it; the sidecar gets in when it comes up', async (t) => {
  const port = await freePort();
  const url = `ws://127.0.0.1:${port}/`;
  const h = new Harness(t);
  const A = h.dir('alice');
  const ta = await ticket('alice');
  const r = await join(h, A, 'alice', url, ['--ticket', ta, '--wait', '1s']);
  h.trackSidecar(A);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    new RegExp(
      `^sidecar pid \\d+ started but is not in room 'lab' yet: connection refused by 127\\.0\\.0\\.1:${port}: nothing listens there\\. Start the relay, or fix --relay; it keeps retrying`,
    ),
  );
  const st = await h.run(A, ['status'], { json: false });
  assert.match(
    st.stdout,
    /: not connected \(attempt \d+, retrying\): connection refused by 127\.0\.0\.1:\d+: nothing listens there/,
  );
  assert.match(
    sidecarLog(A),
    /cannot join room 'lab' via ws:\/\/127\.0\.0\.1:\d+\/rooms\/lab\?ticket=<ticket …\S{4}> \(attempt 1\): connection refused/,
  );
  // A second join with the same settings says the same, and exits 0: retrying can fix this.
  const again = await join(h, A, 'alice', url, ['--ticket', ta]);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /runs but is not in room 'lab' yet: connection refused/);

  const relay = await startRoomsRelay(t, { secret: SECRET, port });
  await waitFor('alice got in', async () => (await h.ok(A, ['status'])).connected, {
    timeoutMs: 60_000,
  });
  assert.match((await h.run(A, ['status'], { json: false })).stdout, /: connected; 0 peer\(s\)/);
  assert.match(sidecarLog(A), /in room 'lab' via .* after \d+ failed attempt\(s\)/);
  await h.ok(A, ['leave']);
  h.assertNoSecret(ta, { extra: [relay.output()], allowedFiles: [path.join(A, 'ticket')] });
});

test('a relay whose certificate is not trusted is named as a TLS failure (exit 3)', async (t) => {
  const h = new Harness(t);
  const certDir = h.dir('cert');
  // A throwaway self-signed certificate, made for this run (never committed).
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      path.join(certDir, 'k.pem'),
      '-out',
      path.join(certDir, 'c.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const srv = https.createServer(
    {
      key: fs.readFileSync(path.join(certDir, 'k.pem')),
      cert: fs.readFileSync(path.join(certDir, 'c.pem')),
    },
    (req, res) => res.end('never reached'),
  );
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  const A = h.dir('alice');
  const r = await join(h, A, 'alice', `wss://127.0.0.1:${srv.address().port}/`, [
    '--ticket',
    await ticket('alice'),
  ]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /TLS: 127\.0\.0\.1:\d+ presented a certificate this machine does not trust \(DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate\)\. Use a certificate from a public CA, or point NODE_EXTRA_CA_CERTS at your CA's PEM file/,
  );
});

test('refused on a reconnect: status says why; join with the same ticket exits 3; join --ticket NEW restarts the sidecar and it is back in', async (t) => {
  const dbDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-rooms-'));
  t.after(() => fs.rmSync(dbDir, { recursive: true, force: true }));
  const port = await freePort();
  let relay = await startRoomsRelay(t, { secret: SECRET, port, dir: dbDir });
  const h = new Harness(t);
  const A = h.dir('alice');
  const first = await ticket('alice');
  assert.equal((await join(h, A, 'alice', relay.url, ['--ticket', first])).code, 0);
  h.trackSidecar(A);
  // The relay comes back with a rotated secret: the saved ticket no longer opens the room.
  await relay.stop();
  const rotated = 'rotated-secret-0123456789abcdef0123456789';
  relay = await startRoomsRelay(t, { secret: rotated, port, dir: dbDir });
  await waitFor('the refusal is in status', async () =>
    /ticket-signature/.test((await h.ok(A, ['status'])).link?.failure?.kind ?? ''),
  );
  const st = await h.run(A, ['status'], { json: false });
  assert.match(
    st.stdout,
    /: not connected \(attempt \d+, retrying will not help\): the relay refused the ticket \(HTTP 401 signature\)/,
  );
  const same = await join(h, A, 'alice', relay.url);
  assert.equal(same.code, 3);
  assert.match(
    same.stderr,
    /sidecar pid \d+ runs but is not in room 'lab': the relay refused the ticket \(HTTP 401 signature\)/,
  );
  const fresh = await ticket('alice', { secret: rotated });
  const again = await join(h, A, 'alice', relay.url, ['--ticket', fresh]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /restarting sidecar pid \d+ with the new ticket/);
  assert.match(again.stdout, /^joined room 'lab' as 'alice'/);
  h.trackSidecar(A);
  assert.equal((await h.ok(A, ['status'])).connected, true);
  await h.ok(A, ['leave']);
  for (const s of [first, fresh])
    h.assertNoSecret(s, { extra: [relay.output()], allowedFiles: [path.join(A, 'ticket')] });
});
