// `tether mcp` starting its sidecar on the real self-hosted room relay (web/host/rooms.js under
// Deno) with real tickets from the MCP client's environment: it gets in and talks; a refused
// ticket is a tool error naming the fix while the server goes on serving; and no ticket shows up
// in any tool result, log or state file (only the 0600 `ticket` files hold them).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { mintTicket } from '../../web/edge/tickets.js';
import { Harness, waitFor } from './lib/agent-harness.mjs';
import { startMcp } from './lib/mcp-client.mjs';
import { startRoomsRelay } from './lib/rooms-relay.mjs';

const SECRET = 'agent-mcp-connect-secret-0123456789abcdef';
const ticket = (id, secret = SECRET) =>
  mintTicket(secret, { writer: id, kind: 'agent', room: 'lab' });

test('tether mcp joins with $TETHER_TICKET, names a refused ticket, and never shows one', async (t) => {
  const relay = await startRoomsRelay(t, { secret: SECRET });
  const h = new Harness(t);
  const [A, B, C, D] = ['alice', 'bob', 'carol', 'dan'].map((n) => h.dir(n));
  const [ta, tb, tc] = [
    await ticket('alice'),
    await ticket('bob'),
    await ticket('carol', 'x'.repeat(40)),
  ];
  await h.join(B, 'bob', relay.url, [], { env: { TETHER_TICKET: tb } });
  const join = (dir, id) => ['--dir', dir, '--relay', relay.url, '--room', 'lab', '--id', id];

  const alice = await startMcp(t, h, join(A, 'alice'), { env: { TETHER_TICKET: ta } });
  const st = await alice.ok('status');
  h.trackSidecar(A);
  assert.equal(st.connected, true);
  assert.equal(st.relay, relay.url);
  assert.equal(fs.statSync(path.join(A, 'ticket')).mode & 0o777, 0o600);
  assert.ok(!fs.readFileSync(path.join(A, 'config.json'), 'utf8').includes(ta));
  await waitFor('alice sees bob', async () =>
    (await alice.ok('peers')).peers.some((p) => p.id === 'bob' && p.open),
  );
  const sent = await alice.ok('send', { peer: 'bob', text: 'hello over tickets' });
  await waitFor('bob has it', async () => (await h.ok(B, ['notify'])).unread === 1);
  const [m] = (await h.ok(B, ['read'])).messages;
  assert.deepEqual([m.envelope.id, m.envelope.payload.text], [sent.id, 'hello over tickets']);

  // A credential pasted into a message is masked in what the tools return, as the CLI masks it.
  const pasted = await ticket('someone');
  await h.ok(B, ['send', 'alice', `use ${pasted} to get in`]);
  await waitFor('alice has it', async () => (await alice.ok('peek')).messages.length === 1);
  const shown = await alice.call('read');
  assert.ok(!JSON.stringify(shown).includes(pasted.slice(-24)), 'the ticket is not in the result');
  assert.equal(
    shown.structuredContent.messages[0].envelope.payload.text,
    `use <ticket …${pasted.slice(-4)}> to get in`,
  );

  // A ticket signed with another secret: the relay's reason, and the fix, as a tool error.
  const carol = await startMcp(t, h, join(C, 'carol'), { env: { TETHER_TICKET: tc } });
  for (let i = 0; i < 2; i++) {
    const text = await carol.err('status');
    assert.match(
      text,
      /cannot join room 'lab' via ws:\/\/127\.0\.0\.1:\d+\/: .*bad signature: the ticket was not signed with this relay's TICKET_SECRET; mint one with the relay's secret/,
    );
  }
  assert.deepEqual((await carol.ok('read')).messages, [], 'still serving');
  // No ticket at all.
  const dan = await startMcp(t, h, join(D, 'dan'));
  assert.match(await dan.err('peers'), /this relay needs a ticket/);

  for (const d of [A, B]) await h.ok(d, ['leave']);
  for (const [secret, own] of [
    [ta, A],
    [tb, B],
    [tc, C],
  ])
    h.assertNoSecret(secret, {
      extra: [relay.output(), alice.stderr(), carol.stderr(), dan.stderr()],
      allowedFiles: [path.join(own, 'ticket')],
    });
});
