// `tether mcp` end to end: the MCP SDK's own client (StdioClientTransport) spawns the real
// command for two agents in a room on a real ws relay (127.0.0.1) with real sidecars, and uses
// every tool and the inbox resource between them. Bad calls are answered as tool errors while
// the server goes on serving. Sidecars and servers are stopped by PID when a test ends.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { Harness, alive, waitFor } from './lib/agent-harness.mjs';
import { startMcp } from './lib/mcp-client.mjs';

const TOOLS = [
  'broadcast',
  'handoff',
  'handoffs',
  'history',
  'mailbox_read',
  'mailbox_send',
  'mailbox_status',
  'peek',
  'peers',
  'read',
  'receipt',
  'respond',
  'send',
  'status',
  'swarm_fetch',
  'swarm_list',
  'swarm_offer',
  'swarm_status',
];

async function room(t) {
  const server = await startRoomServer();
  t.after(() => server.close());
  return server;
}

const texts = (r) => r.messages.map((m) => m.envelope.payload.text);
const online = async (m, id) => (await m.ok('peers')).peers.some((p) => p.id === id && p.open);

test('two agents through tether mcp: send, read, broadcast, peers, history, a handoff and its receipt, a swarm fetch, the inbox resource', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  // Bob joined from the command line; alice's server starts her sidecar itself on first use.
  await h.join(B, 'bob', server.url);
  const alice = await startMcp(t, h, [
    '--dir',
    A,
    '--relay',
    server.url,
    '--room',
    'lab',
    '--id',
    'alice',
  ]);
  const bob = await startMcp(t, h, ['--dir', B]);

  const listed = await alice.client.listTools();
  assert.deepEqual(listed.tools.map((x) => x.name).sort(), TOOLS);
  const send = listed.tools.find((x) => x.name === 'send');
  assert.equal(send.inputSchema.additionalProperties, false, 'strict arguments');
  assert.equal(send.inputSchema.properties.peer.maxLength, 128, "the core's bound");
  assert.deepEqual(send.inputSchema.required, ['peer']);
  const outward = listed.tools.filter((x) => x.annotations.openWorldHint).map((x) => x.name);
  assert.deepEqual(outward.sort(), [
    'broadcast',
    'handoff',
    'mailbox_send',
    'respond',
    'send',
    'swarm_offer',
  ]);
  assert.equal(listed.tools.find((x) => x.name === 'peek').annotations.readOnlyHint, true);
  assert.equal(listed.tools.find((x) => x.name === 'read').annotations.readOnlyHint, false);

  assert.ok(!fs.existsSync(path.join(A, 'endpoint.json')), 'no sidecar yet');
  const st = await alice.ok('status');
  h.trackSidecar(A);
  assert.equal(st.id, 'alice');
  assert.equal(st.room, 'lab');
  assert.ok(alive(st.pid) && st.pid !== alice.pid, 'a sidecar of its own, detached');
  assert.match(alice.stderr(), /joined room 'lab' as 'alice'/);
  await waitFor('alice sees bob with handoff-v1', async () =>
    (await alice.ok('peers')).peers.some(
      (p) => p.id === 'bob' && p.open && p.skills.includes('handoff-v1'),
    ),
  );
  await waitFor('bob sees alice', () => online(bob, 'alice'));

  // A direct message: peek leaves it, read consumes it.
  const s1 = await alice.ok('send', { peer: 'bob', text: 'hello bob', topic: 'greet' });
  assert.equal(s1.state, 'sent');
  await waitFor('bob has it', async () => (await bob.ok('peek')).messages.length === 1);
  const peeked = await bob.ok('peek');
  const [m1] = peeked.messages.map((m) => m.envelope);
  assert.deepEqual(
    [m1.id, m1.from.streamId, m1.to, m1.topic, m1.payload.text],
    [s1.id, 'alice', 'bob', 'greet', 'hello bob'],
  );
  const read = await bob.ok('read');
  assert.deepEqual(texts(read), ['hello bob']);
  assert.equal(read.consumed, true);
  assert.equal((await bob.ok('read')).messages.length, 0, 'read consumed it');

  // A JSON payload and another type, then a broadcast.
  const s2 = await bob.ok('send', {
    peer: 'alice',
    type: 'event',
    payload: { build: 'green', n: 7 },
  });
  const bc = await bob.ok('broadcast', { text: 'all hands', topic: 'news' });
  assert.deepEqual(bc.delivered, ['alice']);
  await waitFor('alice has both', async () => (await alice.ok('peek')).messages.length === 2);
  const ra = (await alice.ok('read', { take: 5 })).messages.map((m) => m.envelope);
  assert.deepEqual(
    ra.map((e) => [e.id, e.type, e.to, e.payload]),
    [
      [s2.id, 'event', 'alice', { build: 'green', n: 7 }],
      [bc.id, 'chat', null, { text: 'all hands' }],
    ],
  );

  // A command from text and args is {command, args}; its answer through respond carries requestId.
  const cmd = await alice.ok('send', {
    peer: 'bob',
    type: 'command',
    text: 'build',
    args: { target: 'wasm' },
  });
  await waitFor('bob has the command', async () => (await bob.ok('peek')).messages.length === 1);
  const [c] = (await bob.ok('read')).messages.map((m) => m.envelope);
  assert.deepEqual(
    [c.id, c.type, c.payload],
    [cmd.id, 'command', { command: 'build', args: { target: 'wasm' } }],
  );
  await bob.ok('respond', { peer: 'alice', request_id: c.id, result: { built: true } });
  await waitFor('alice has the answer', async () => (await alice.ok('peek')).messages.length === 1);
  const [answer] = (await alice.ok('read')).messages.map((m) => m.envelope);
  assert.deepEqual(
    [answer.type, answer.payload],
    ['command_response', { requestId: cmd.id, ok: true, result: { built: true } }],
  );
  const rcmd = await alice.ok('receipt', { peer: 'bob', request_id: cmd.id });
  assert.equal(rcmd.receipts.length, 1);
  assert.equal(rcmd.receipts[0].failed, false);

  // History: a broadcast bob missed while his sidecar was down comes back, new, into his inbox.
  await h.ok(B, ['leave']);
  await waitFor('alice sees bob gone', async () => !(await online(alice, 'bob')));
  const missed = await alice.ok('broadcast', { text: 'while you were out' });
  assert.deepEqual(missed.delivered, []);
  await h.join(B, 'bob', server.url);
  await waitFor('bob sees alice again', () => online(bob, 'alice'));
  const hist = await bob.ok('history', { peer: 'alice', count: 10 });
  assert.ok(
    hist.replayed.some((e) => e.id === missed.id),
    'the missed broadcast is replayed',
  );
  assert.deepEqual(hist.fresh, [missed.id], 'and it alone is new');
  assert.deepEqual(texts(await bob.ok('read')), ['while you were out']);

  // A handoff: stored by bob's sidecar, its receipt kept on alice's side.
  await waitFor('alice sees bob with handoff-v1 again', async () =>
    (await alice.ok('peers')).peers.some(
      (p) => p.id === 'bob' && p.open && p.skills.includes('handoff-v1'),
    ),
  );
  const ho = await alice.ok('handoff', {
    peer: 'bob',
    request: 'review PR 7',
    expires_in_ms: 3_600_000,
  });
  assert.ok(ho.expiresAt > Date.now() + 3_500_000 && ho.expiresAt <= Date.now() + 3_600_000);
  await waitFor('the handoff is stored', async () =>
    (await alice.ok('handoffs')).handoffs.some((x) => x.id === ho.id && x.state === 'stored'),
  );
  const rc = await alice.ok('receipt', { peer: 'bob', request_id: ho.id });
  assert.equal(rc.receipts.length, 1);
  assert.equal(rc.receipts[0].type, 'handoff');
  assert.equal(rc.receipts[0].state, 'stored');
  assert.equal(rc.receipts[0].failed, false);
  assert.ok(Number.isFinite(rc.receipts[0].storedAt));
  assert.deepEqual((await alice.ok('receipt', { peer: 'carol', request_id: ho.id })).receipts, []);
  const hb = (await bob.ok('read')).messages.map((m) => m.envelope);
  assert.deepEqual(
    hb.map((e) => [e.id, e.type, e.from.streamId, e.payload.request]),
    [[ho.id, 'handoff', 'alice', 'review PR 7']],
  );

  // A swarm: alice offers a file, bob fetches it with progress; the bytes are the file's.
  const src = path.join(h.dir('src'), 'weights.bin');
  const data = randomBytes(700_000);
  fs.writeFileSync(src, data);
  const sha = createHash('sha256').update(data).digest('hex');
  const offer = await alice.ok('swarm_offer', { path: src });
  assert.deepEqual([offer.fileId, offer.name, offer.size], [sha, 'weights.bin', data.length]);
  await waitFor('bob sees the offer', async () => sha in (await bob.ok('swarm_list')).offers);
  assert.equal((await alice.ok('swarm_list')).offers[sha].ours, true);
  const dest = h.dir('dest');
  const progress = [];
  const got = await bob.ok(
    'swarm_fetch',
    { file_id: sha, to: dest },
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(got.sha256, sha);
  assert.equal(got.path, path.join(dest, 'weights.bin'));
  assert.ok(fs.readFileSync(got.path).equals(data), 'the fetched bytes are the offered file');
  // Progress is what arrived before the result (the SDK's client drops a notification it reads
  // together with the result, so a fast fetch may show none; fetchProgress's own test covers every
  // step): forward, in chunks.
  const chunks = Math.ceil(data.length / 65536);
  const steps = progress.map((p) => p.progress);
  assert.ok(
    steps.every((n, i) => n <= chunks && (i === 0 || n > steps[i - 1])),
    `progress only increases: ${steps}`,
  );
  assert.ok(
    progress.every(
      (p) => p.total === chunks && /^weights\.bin: \d+\/700000 bytes$/.test(p.message),
    ),
  );
  assert.equal((await bob.ok('swarm_status', { file_id: sha })).state, 'done');

  // The inbox resource: listed, read without consuming, and a subscriber hears of new mail.
  const { resources } = await bob.client.listResources();
  assert.deepEqual(
    resources.map((r) => [r.uri, r.mimeType]),
    [['tether://inbox', 'application/json']],
  );
  await bob.client.subscribeResource({ uri: 'tether://inbox' });
  const s3 = await alice.ok('send', { peer: 'bob', text: 'ring ring' });
  await waitFor('bob is told of new mail', () =>
    bob.updates.some((u) => u.uri === 'tether://inbox'),
  );
  const inbox = async () =>
    JSON.parse((await bob.client.readResource({ uri: 'tether://inbox' })).contents[0].text);
  const view = await inbox();
  assert.equal(view.unread, 1);
  assert.deepEqual(
    view.messages.map((m) => [m.envelope.id, m.envelope.payload.text]),
    [[s3.id, 'ring ring']],
  );
  assert.equal((await inbox()).unread, 1, 'reading the resource consumes nothing');
  assert.deepEqual(texts(await bob.ok('read')), ['ring ring']);
  assert.equal((await inbox()).unread, 0);
  await bob.client.unsubscribeResource({ uri: 'tether://inbox' });
  await assert.rejects(
    bob.client.subscribeResource({ uri: 'tether://outbox' }),
    /only tether:\/\/inbox/,
  );

  // A server started without a sidecar's settings reads the dir's saved ones: bob's sidecar,
  // stopped, is started again by the next tool that needs it.
  const before = (await bob.ok('status')).pid;
  await h.ok(B, ['leave']);
  assert.ok(!alive(before));
  const after = await bob.ok('status');
  h.trackSidecar(B);
  assert.notEqual(after.pid, before);
  assert.equal(after.id, 'bob');

  for (const d of [A, B]) await h.ok(d, ['leave']);
});

test('bad tool calls are clear tool errors, and the server goes on serving', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  await h.join(A, 'alice', server.url);
  await h.join(B, 'bob', server.url);
  const alice = await startMcp(t, h, ['--dir', A]);
  await waitFor('alice sees bob', () => online(alice, 'bob'));
  const stillServing = async () => assert.ok(await online(alice, 'bob'));

  const bad = [
    // wrong types
    [
      'send',
      { peer: 5, text: 'x' },
      /peer must be a string \(a peer id from the peers tool\) at peer/,
    ],
    ['send', { peer: 'bob', text: 7 }, /text must be a string/],
    ['read', { take: 'all' }, /take must be a number from 0 to 1000/],
    ['read', { take: 2.5 }, /take must be a whole number/],
    ['read', { take: 1001 }, /take must be at most 1000/],
    ['history', { peer: 'bob', count: 0 }, /count must be at least 1/],
    ['history', { peer: 'bob', count: 201 }, /count must be at most 200/],
    ['handoff', { peer: 'bob', request: ['x'] }, /request must be a string/],
    [
      'handoff',
      { peer: 'bob', request: 'x', expires_in_ms: 86_400_001 },
      /expires_in_ms must be at most 86400000/,
    ],
    [
      'send',
      { peer: 'bob', text: 'x', type: 'handoff' },
      /type must be one of chat, command, command_response, event, ack/,
    ],
    [
      'send',
      { peer: 'bob', text: 'x', payload: { a: 1 } },
      /give either text .* or payload .*, not both/,
    ],
    ['send', { peer: 'bob' }, /give either text .* or payload/],
    // typed text: a command is one word, an answer goes through respond
    [
      'send',
      { peer: 'bob', type: 'command', text: 'deploy now' },
      /type command takes one word, the command's name .*; give its arguments as JSON with args/,
    ],
    [
      'send',
      { peer: 'bob', type: 'command_response', text: 'done' },
      /a command_response answers a command by its id .*: use the respond tool/,
    ],
    ['send', { peer: 'bob', text: 'x', args: { a: 1 } }, /args goes with type command only/],
    // refused by the bus core, which alone holds an ack's id to the bus id bound
    [
      'send',
      { peer: 'bob', type: 'ack', text: 'm'.repeat(129) },
      /type ack takes the id of the message it acknowledges, and no message id is longer than 128 characters \(got 129\)/,
    ],
    [
      'send',
      { peer: 'bob', type: 'command', payload: { command: 'x' }, args: {} },
      /payload is the whole payload: give the args inside it/,
    ],
    [
      'respond',
      { peer: 'bob', request_id: 'r1', result: 1, error: 'x' },
      /an answer is a result or an error, not both/,
    ],
    [
      'respond',
      { peer: 'bob', request_id: 'r1', error: '' },
      /error is empty; say what went wrong/,
    ],
    ['respond', { peer: 'bob', error: 'x' }, /request_id/],
    ['send', { peer: 'bob', payload: [1, 2] }, /payload must be a JSON object/],
    ['send', { peer: '', text: 'x' }, /peer is empty; give a peer id/],
    ['send', { peer: 'b\u0000ob', text: 'x' }, /peer holds a NUL character/],
    ['send', { peer: 'b'.repeat(129), text: 'x' }, /peer is longer than 128 characters/],
    [
      'send',
      { peer: 'bob', txt: 'hi' },
      /unknown argument 'txt': this tool takes peer, text, payload, type, args, topic, allow_unseen/,
    ],
    [
      'swarm_fetch',
      { file_id: 'nothex', to: '/tmp' },
      /file_id is the file's SHA-256 in 64 lowercase hex characters/,
    ],
    [
      'swarm_offer',
      { path: path.join(A, 'no-such-file') },
      /cannot offer .*no-such-file \(ENOENT\); give a readable file/,
    ],
    ['no_such_tool', {}, /Tool no_such_tool not found/],
    // oversize: over the envelope as text, and as a handoff request
    [
      'send',
      { peer: 'bob', text: 'x'.repeat(300_000) },
      /text is over 262144 bytes as JSON.*offer the rest as a file with swarm_offer/,
    ],
    ['send', { peer: 'bob', text: '\u0001'.repeat(50_000) }, /text is 300002 bytes as JSON/],
    ['broadcast', { payload: { blob: 'y'.repeat(270_000) } }, /payload is 270011 bytes as JSON/],
    [
      'handoff',
      { peer: 'bob', request: 'z'.repeat(32_001) },
      /request is 32003 bytes as a JSON string, over the 32000 a handoff carries/,
    ],
    // under the text bound alone, over the envelope's: the bus core refuses it
    ['send', { peer: 'bob', text: 'w'.repeat(262_000) }, /cannot send: too_large/],
    // unknown peers
    [
      'send',
      { peer: 'bobb', text: 'hi' },
      /nobody named 'bobb' has been in room 'lab' since this agent joined it \(seen: .*bob.*\); check the name .*allow_unseen: true/,
    ],
    [
      'handoff',
      { peer: 'nobody', request: 'x' },
      /'nobody' has no current handoff-v1 announcement/,
    ],
    ['history', { peer: 'nobody' }, /'nobody' is not reachable now/],
    ['send', { peer: 'alice', text: 'x' }, /that is our own id/],
  ];
  for (const [tool, args, want] of bad) {
    const text = await alice.err(tool, args);
    assert.doesNotMatch(text, /unexpectedly|this is a bug/, 'a refusal, not a bug');
    assert.match(text, want, `${tool} ${JSON.stringify(args).slice(0, 80)}`);
    await stillServing();
  }
  // Nothing was queued by any of them; allow_unseen queues for a peer still to come.
  assert.equal((await h.ok(A, ['notify'])).queued, 0);
  const q = await alice.ok('send', { peer: 'dave', text: 'for later', allow_unseen: true });
  assert.equal(q.state, 'queued');
  assert.deepEqual((await h.ok(A, ['notify'])).queuedBy, { dave: 1 });

  // No sidecar and no settings: every tool that needs one says which join to run; the inbox
  // tools work on the state dir alone.
  const E = h.dir('empty');
  const lone = await startMcp(t, h, ['--dir', E]);
  for (const tool of ['status', 'peers', 'swarm_list']) {
    const text = await lone.err(tool);
    assert.match(
      text,
      new RegExp(
        `no sidecar runs for ${E}.*\`tether agent join --dir ${E} --relay ws://HOST:PORT/ --room ROOM --id ID\`.*or start \`tether mcp\` with --relay, --room and --id`,
      ),
    );
  }
  assert.deepEqual((await lone.ok('read')).messages, []);
  assert.ok(alive(lone.pid), 'still serving');

  // A sidecar killed without cleanup leaves its lock and endpoint behind: the next tool that
  // needs it starts a new one from the dir's saved settings.
  const dead = await h.crash(B);
  const bobMcp = await startMcp(t, h, ['--dir', B]);
  const back = await bobMcp.ok('status');
  h.trackSidecar(B);
  assert.notEqual(back.pid, dead);
  await waitFor('alice sees bob back', () => online(alice, 'bob'));
  await h.ok(B, ['leave']);
  await h.ok(A, ['leave']);
});
