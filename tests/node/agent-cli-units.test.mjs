// The pieces under the agent command line, one by one: flag parsing and "did you mean", ticket
// redaction, the relay-answer naming of web/agent/sidecar/link.js, the room endpoint's 401
// reasons (web/edge/room-request.js, shared by the Worker and the Deno relay), and the bounds and
// envelope version envelope.js takes from the bus core instead of restating them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError, closest, parseFlags } from '../../web/agent/cli/args.js';
import { bus, makeEnvelope, newId, useBus } from '../../web/agent/envelope.js';
import { maskTicket, redact } from '../../web/agent/redact.js';
import { describeFailure, roomUrl, splitTicket } from '../../web/agent/sidecar/link.js';
import { checkRoomRequest } from '../../web/edge/room-request.js';
import { mintTicket } from '../../web/edge/tickets.js';

const SECRET = 'unit-secret-0123456789abcdef0123456789abcdef';
const OPTS = {
  topic: { type: 'string' },
  type: { type: 'string' },
  peek: { type: 'boolean' },
  'expires-in': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

test('flags: values, = form, -- ends flags, a value may start with -, booleans take none', () => {
  assert.deepEqual(parseFlags(['bob', '--topic', 't', 'hi', '--peek', '--type=chat'], OPTS), {
    values: { topic: 't', peek: true, type: 'chat' },
    positionals: ['bob', 'hi'],
  });
  assert.deepEqual(parseFlags(['--topic', '-5', '-', '--', '--peek'], OPTS), {
    values: { topic: '-5' },
    positionals: ['-', '--peek'],
  });
  assert.deepEqual(parseFlags(['-h'], OPTS).values, { help: true });
  // A message id is base64url and may start with '-': an argument, not a flag.
  assert.deepEqual(parseFlags(['bob', '-Xq3_a9', '--peek'], OPTS), {
    values: { peek: true },
    positionals: ['bob', '-Xq3_a9'],
  });
  const err = (args) => {
    try {
      parseFlags(args, OPTS);
    } catch (e) {
      assert.ok(e instanceof UsageError);
      return e.message;
    }
    assert.fail(`no error for ${args.join(' ')}`);
  };
  assert.equal(err(['--tpoic', 'x']), 'unknown flag --tpoic; did you mean --topic?');
  assert.equal(err(['--exp', '1h']), 'unknown flag --exp; did you mean --expires-in?');
  assert.match(err(['--zzzzzz']), /^unknown flag --zzzzzz; this command takes --topic, --type, /);
  assert.match(err(['--zzzzzz']), /an argument that starts with -- goes after a lone --\)$/);
  assert.match(err(['-x']), /^unknown flag -x; /);
  assert.equal(err(['--topic']), '--topic needs a value: --topic VALUE');
  assert.equal(err(['--peek=yes']), "--peek takes no value (got '--peek=yes')");
  assert.match(err(['--topic', 'a', '--topic', 'b']), /--topic was given twice/);
  assert.equal(closest('sned', ['send', 'read', 'join']), 'send');
  assert.equal(closest('xyzzy', ['send', 'read', 'join']), null);
});

test('redact: tickets in URLs and text, bearer tokens; the last four characters stay', async () => {
  const t = await mintTicket(SECRET, { writer: 'alice', kind: 'agent', room: 'lab' });
  const line = `ws://h:1/rooms/lab?ticket=${encodeURIComponent(t)}&x=1 and ${t} and Bearer abc.DEF_123`;
  const r = redact(line);
  assert.ok(!r.includes(t), r);
  assert.ok(!r.includes(t.split('.')[2]), 'no part of the signature');
  assert.ok(!r.includes('abc.DEF_123'));
  assert.equal(
    r,
    `ws://h:1/rooms/lab?ticket=${maskTicket(t)}&x=1 and ${maskTicket(t)} and Bearer <redacted>`,
  );
  assert.equal(maskTicket(t), `<ticket …${t.slice(-4)}>`);
  assert.equal(redact(r), r, 'idempotent');
});

test('the room URL: <base>/rooms/<room>, the ticket in its query, a ticket in --relay moved out', () => {
  assert.equal(
    roomUrl('ws://127.0.0.1:8787/', 'lab', { ticket: 't1.a.b', id: 'alice' }),
    'ws://127.0.0.1:8787/rooms/lab?ticket=t1.a.b',
  );
  assert.equal(
    roomUrl('wss://x.example/tether', 'a b', { ticket: 't1.a.b', id: 'alice' }),
    'wss://x.example/tether/rooms/a%20b?ticket=t1.a.b',
  );
  assert.equal(
    roomUrl('ws://h/rooms/lab', 'lab', { ticket: null, id: 'alice' }),
    'ws://h/rooms/lab?writer=alice&kind=agent',
    'no ticket: the loopback test relay’s writer/kind stand-in',
  );
  assert.deepEqual(splitTicket('ws://h:1/?ticket=t1.a.b&z=1'), {
    relay: 'ws://h:1/?z=1',
    ticket: 't1.a.b',
  });
});

test('relay answers are named, with whether retrying helps', () => {
  const at = { url: 'ws://127.0.0.1:9/base/rooms/lab?ticket=t1.a.b', room: 'lab' };
  const d = (f) => describeFailure({ attempt: 1, ...f }, at);
  let r = d({ stage: 'connect', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
  assert.equal(r.retryable, true);
  assert.match(r.message, /^connection refused by 127\.0\.0\.1:9: nothing listens there/);
  for (const [reason, body, want] of [
    [
      'signature',
      "signature: the ticket was not signed with this server's TICKET_SECRET",
      /HTTP 401 signature\): bad signature: .*TICKET_SECRET/,
    ],
    [
      'expired',
      'expired: the ticket has expired',
      /HTTP 401 expired\): the ticket has expired; mint a fresh one/,
    ],
    [
      'room',
      'room: the ticket is for room "other", not "lab"',
      /HTTP 401 room\): the ticket is for room "other", not "lab"; mint one for this room/,
    ],
    [
      'missing',
      'missing: no ticket',
      /HTTP 401 missing\): this relay needs a ticket: .*--ticket TICKET/,
    ],
  ]) {
    r = d({ stage: 'upgrade', status: 401, body, retryAfter: null });
    assert.equal(r.kind, `ticket-${reason}`);
    assert.equal(r.retryable, false);
    assert.match(r.message, want);
  }
  r = d({
    stage: 'upgrade',
    status: 404,
    body: 'tether rooms: connect a WebSocket to /rooms/<name>?ticket=<ticket>\n',
  });
  assert.equal(r.retryable, false);
  assert.match(
    r.message,
    /no room endpoint at \/base\/rooms\/lab \(HTTP 404: "tether rooms: connect a WebSocket to \/rooms\/<name>\?ticket=<ticket>"\)/,
  );
  r = d({ stage: 'upgrade', status: 503, body: 'full', retryAfter: '2' });
  assert.equal(r.retryable, true);
  assert.match(r.message, /HTTP 503: "full"\); it asks to retry after 2 s/);
  r = d({
    stage: 'connect',
    code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
    message: 'self-signed certificate',
  });
  assert.equal(r.kind, 'tls');
  assert.equal(r.retryable, false);
  assert.match(r.message, /certificate this machine does not trust \(DEPTH_ZERO_SELF_SIGNED_CERT/);
  r = d({ stage: 'upgrade', status: 401, body: `x\u0000\u001b[31m${'y'.repeat(5000)}` });
  assert.ok(
    !/[\u0000-\u001f]/.test(r.message),
    'control characters from the network are not printed',
  );
  assert.ok(r.message.length < 600, 'a huge body is not quoted whole');
});

test('the room endpoint answers 401 with the reason in the body, and never echoes the ticket', async () => {
  const req = (path, ticket) =>
    new Request(`http://h${path}?ticket=${encodeURIComponent(ticket)}`, {
      headers: { upgrade: 'websocket' },
    });
  const good = await mintTicket(SECRET, { writer: 'w', kind: 'agent', room: 'lab' });
  const other = await mintTicket('another-secret-0123456789abcdef012345', {
    writer: 'w',
    room: 'lab',
  });
  const elsewhere = await mintTicket(SECRET, { writer: 'w', room: 'other' });
  const old = await mintTicket(SECRET, {
    writer: 'w',
    room: 'lab',
    ttlSeconds: 1,
    nowMs: Date.now() - 60_000,
  });
  const admitted = await checkRoomRequest(req('/rooms/lab', good), SECRET);
  // exp: the ticket's expiry (seconds), which an HTTP member's session is bound to.
  assert.ok(Number.isInteger(admitted.exp) && admitted.exp * 1000 > Date.now(), `${admitted.exp}`);
  assert.deepEqual(
    { ...admitted, exp: undefined },
    {
      room: 'lab',
      writer: 'w',
      kind: 'agent',
      exp: undefined,
    },
  );
  for (const [ticket, reason] of [
    [other, 'signature'],
    [elsewhere, 'room'],
    [old, 'expired'],
    ['', 'missing'],
    ['t1.zz', 'malformed'],
  ]) {
    const { response } = await checkRoomRequest(req('/rooms/lab', ticket), SECRET);
    assert.equal(response.status, 401);
    const body = await response.text();
    assert.ok(body.startsWith(`${reason}: `), body);
    if (ticket) assert.ok(!body.includes(ticket), 'the ticket is not echoed');
  }
  const { response } = await checkRoomRequest(req('/nope', good), SECRET);
  assert.equal(response.status, 404);
  assert.match(await response.text(), /\/rooms\/<name>\?ticket=<ticket>/);
});

test('envelope.js restates no bus bound: the version and limits are the core’s', async () => {
  assert.ok(await useBus());
  const api = bus();
  assert.equal(api.envelopeVersion, 1);
  const e = makeEnvelope({
    from: { streamId: 'a', role: 'agent', name: 'A', instanceId: 'i' },
    type: 'chat',
    to: 'b',
    payload: { text: 'x' },
  });
  assert.equal(e.env.v, api.envelopeVersion);
  const src = await import('node:fs').then((fs) =>
    fs.readFileSync(new URL('../../web/agent/envelope.js', import.meta.url), 'utf8'),
  );
  assert.doesNotMatch(src, /\b(128|200|32_?000|24 \* 60)\b/, 'no bound written in envelope.js');
});

test('message ids never start with -, so they can be pasted as command-line arguments', async () => {
  assert.ok(await useBus());
  // One base64url id in 64 starts with '-': 4,000 draws miss a regression with odds below 1e-27.
  for (let i = 0; i < 4000; i++) {
    const id = newId();
    assert.notEqual(id[0], '-', id);
    assert.equal(Buffer.from(id, 'base64url').length, bus().limits.idRandomBytes);
  }
});
