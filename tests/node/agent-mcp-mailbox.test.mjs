// `tether mcp`'s hosted mailbox tools against the real Deno mailbox host: the owner created the
// mailbox and paired the sender with `tether mailbox` (keys in each state dir); through the SDK's
// own client the sender sends, the owner reads, and the sender sees the status move. Bad calls
// (an unpaired or unknown mailbox, a resend, text over the mailbox's bound, a wrong type) are
// tool errors naming the fix, and no key ever appears in a result.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { killDenoHosts, startDenoMailbox } from '../e2e/lib/mailbox_hosts.mjs';
import { Harness } from './lib/agent-harness.mjs';
import { startMcp } from './lib/mcp-client.mjs';

const hostDir = mkdtempSync(join(tmpdir(), 'tether-mcp-mailbox-'));
after(() => {
  killDenoHosts();
  rmSync(hostDir, { recursive: true, force: true });
});

async function mailbox(h, dir, args) {
  const r = await h.run(dir, args, { group: 'mailbox' });
  assert.equal(r.code, 0, `tether mailbox ${args.join(' ')}: ${r.stderr}`);
  return r.json;
}

test('mailbox_send, mailbox_read and mailbox_status through tether mcp: a round trip, and its refusals', async (t) => {
  const host = await startDenoMailbox(hostDir);
  const h = new Harness(t);
  const A = h.dir('alice'); // the owner
  const B = h.dir('bob'); // a paired sender
  const C = h.dir('carol'); // neither
  const made = await mailbox(h, A, ['create', '--url', host.url]);
  const { code } = await mailbox(h, A, ['pair', made.mailbox]);
  await mailbox(h, B, ['pair', made.url, code, '--name', 'bob']);

  const alice = await startMcp(t, h, ['--dir', A]);
  const bob = await startMcp(t, h, ['--dir', B]);
  const carol = await startMcp(t, h, ['--dir', C]);
  const names = (await bob.client.listTools()).tools.map((x) => x.name);
  for (const n of ['mailbox_send', 'mailbox_read', 'mailbox_status']) assert.ok(names.includes(n));

  const sent = await bob.ok('mailbox_send', { mailbox: made.url, text: 'hello alice', id: 'm1' });
  assert.deepEqual([sent.id, sent.status, sent.mailbox], ['m1', 'stored', made.mailbox]);
  const again = await bob.ok('mailbox_send', {
    mailbox: made.mailbox,
    text: 'hello alice',
    id: 'm1',
  });
  assert.equal(again.duplicate, true, 'a resend with the same id stores nothing new');
  const other = await bob.ok('mailbox_send', { mailbox: made.mailbox, text: 'and again' });
  assert.notEqual(other.id, 'm1');

  const peeked = await alice.ok('mailbox_read', { mailbox: made.mailbox, peek: true });
  assert.deepEqual(peeked.markedRead, []);
  assert.equal(
    (await bob.ok('mailbox_status', { mailbox: made.mailbox, id: 'm1' })).status,
    'stored',
  );
  const read = await alice.ok('mailbox_read', { mailbox: made.mailbox, take: 5 });
  assert.deepEqual(
    read.messages.map((m) => [m.id, m.text, m.from.name]),
    [
      ['m1', 'hello alice', 'bob'],
      [other.id, 'and again', 'bob'],
    ],
  );
  assert.equal(read.markedRead.length, 2);
  const st = await bob.ok('mailbox_status', { mailbox: made.mailbox, id: 'm1' });
  assert.equal(st.status, 'read');
  assert.ok(Number.isFinite(st.readAt));
  assert.deepEqual((await alice.ok('mailbox_read', { mailbox: made.mailbox })).messages, []);

  // Refusals: each names what to do, and the servers go on serving.
  assert.match(
    await carol.err('mailbox_send', { mailbox: made.url, text: 'hi' }),
    /is not paired with mailbox .*; pair first: tether mailbox pair/,
  );
  assert.match(
    await bob.err('mailbox_read', { mailbox: made.mailbox }),
    /holds no owner key for mailbox .*; run the command in the state dir that created it/,
  );
  assert.match(
    await carol.err('mailbox_status', { mailbox: 'nosuch', id: 'm1' }),
    /mailbox nosuch is not one this state dir knows; give its URL/,
  );
  assert.match(
    await bob.err('mailbox_status', { mailbox: made.mailbox, id: 'never-sent' }),
    /unknown_message/,
  );
  assert.match(
    await bob.err('mailbox_send', { mailbox: made.mailbox, text: 'é'.repeat(40_000) }),
    /text is over 65536 UTF-8 bytes, the mailbox's bound/,
  );
  assert.match(
    await bob.err('mailbox_read', { mailbox: made.mailbox, take: 101 }),
    /take must be at most 100/,
  );
  assert.match(
    await bob.err('mailbox_send', { mailbox: 7, text: 'x' }),
    /mailbox must be a string/,
  );
  assert.equal(
    (await bob.ok('mailbox_status', { mailbox: made.mailbox, id: 'm1' })).status,
    'read',
  );

  for (const dir of [A, B]) {
    const saved = JSON.parse(readFileSync(join(dir, 'mailboxes.json'), 'utf8'));
    for (const key of [
      ...Object.values(saved.owned).map((e) => e.ownerKey),
      ...Object.values(saved.paired).map((e) => e.senderKey),
    ])
      h.assertNoSecret(key, {
        extra: [alice.stderr(), bob.stderr(), carol.stderr()],
        allowedFiles: [join(A, 'mailboxes.json'), join(B, 'mailboxes.json')],
      });
  }
});
