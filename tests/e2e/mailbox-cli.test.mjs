// `tether mailbox ...` and the sidecar's delivery, as users run them: the real CLI as child
// processes, the real Deno mailbox host, and an agent sidecar joined to a loopback room. The
// owner's sidecar delivers mailbox messages into its inbox and marks them delivered, live and
// after a crash, each exactly once; the sender sees stored, delivered, read; pairing gates sends
// from the command line too; no key ever reaches a terminal.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Harness, waitFor } from '../node/lib/agent-harness.mjs';
import { killDenoHosts, startDenoMailbox } from './lib/mailbox_hosts.mjs';
import { startRoomServer } from './lib/room_server.mjs';

const hostDir = mkdtempSync(join(tmpdir(), 'tether-mailbox-cli-'));
after(() => {
  killDenoHosts();
  rmSync(hostDir, { recursive: true, force: true });
});

const KEY_RE = /mb[os]_[0-9a-f]{64}/;
/** Runs `tether mailbox ARGS --dir DIR --json [--url URL]` (the harness keeps what it printed). */
function mailbox(h, dir, args, { url, input = null } = {}) {
  return h.run(dir, [...args, ...(url ? ['--url', url] : [])], { group: 'mailbox', input });
}

/** No mailbox key in any output or file of the harness except the 0600 files that hold them. */
function assertNoKeys(h, dirs) {
  const files = dirs.map((d) => join(d, 'mailboxes.json'));
  for (const f of files) {
    const saved = JSON.parse(readFileSync(f, 'utf8'));
    const keys = [
      ...Object.values(saved.owned).map((e) => e.ownerKey),
      ...Object.values(saved.paired).map((e) => e.senderKey),
    ];
    for (const key of keys) h.assertNoSecret(key, { allowedFiles: files });
  }
}

async function ok(h, dir, args, opts) {
  const r = await mailbox(h, dir, args, opts);
  assert.equal(r.code, 0, `tether mailbox ${args.join(' ')}: ${r.stderr}`);
  return r.json;
}

const inboxTexts = async (h, dir) =>
  (await h.ok(dir, ['read', '--peek'])).messages.map((m) => m.envelope.payload.text);

test(
  'tether mailbox: create, pair, send, status; the sidecar delivers into the inbox exactly once',
  { timeout: 120_000 },
  async (t) => {
    const h = new Harness(t);
    const host = await startDenoMailbox(hostDir);
    const room = await startRoomServer();
    t.after(() => room.close());
    const A = h.dir('alice'); // the owner, an agent with a sidecar
    const B = h.dir('bob'); // a sender, no sidecar needed

    const made = await ok(h, A, ['create'], { url: host.url });
    const id = made.mailbox;
    assert.equal(made.url, `${host.url}/mailboxes/${id}`);
    assert.ok(
      KEY_RE.test(readFileSync(join(A, 'mailboxes.json'), 'utf8')),
      'the owner key is saved',
    );
    const code = (await ok(h, A, ['pair', id])).code;
    const paired = await ok(h, B, ['pair', made.url, code, '--name', 'bob']);
    assert.equal(paired.state, 'active');

    const m1 = await ok(h, B, ['send', id, 'hello', 'alice', '--id', 'm1']);
    assert.equal(m1.status, 'stored');
    assert.equal((await ok(h, B, ['send', id, 'hello', 'alice', '--id', 'm1'])).duplicate, true);
    assert.equal((await ok(h, B, ['status', id, 'm1'])).status, 'stored');

    // The owner's sidecar starts: the stored message lands in its inbox and becomes `delivered`.
    await h.join(A, 'alice', room.url);
    await waitFor('m1 in the inbox', async () => (await inboxTexts(h, A)).includes('hello alice'));
    await waitFor(
      'm1 delivered',
      async () => (await ok(h, B, ['status', id, 'm1'])).status === 'delivered',
    );
    const env = (await h.ok(A, ['read', '--peek'])).messages[0].envelope;
    assert.equal(env.from.name, 'bob');
    assert.equal(env.to, 'alice');
    assert.equal(env.payload.mailbox.messageId, 'm1');
    assert.equal(env.payload.mailbox.id, id);

    // Live: a message sent while the sidecar runs is pushed and delivered.
    await ok(h, B, ['send', id, '-', '--id', 'm2'], { input: 'from stdin' });
    await waitFor(
      'm2 delivered',
      async () => (await ok(h, B, ['status', id, 'm2'])).status === 'delivered',
    );

    // A crash, a message while it is down, a restart: delivered once, nothing twice.
    await h.crash(A);
    await ok(h, B, ['send', id, 'while you were out', '--id', 'm3']);
    assert.equal((await ok(h, B, ['status', id, 'm3'])).status, 'stored');
    await h.join(A, 'alice', room.url);
    await waitFor(
      'm3 delivered',
      async () => (await ok(h, B, ['status', id, 'm3'])).status === 'delivered',
    );
    assert.deepEqual((await inboxTexts(h, A)).sort(), [
      'from stdin',
      'hello alice',
      'while you were out',
    ]);

    // The owner reads the mailbox itself: read is what the sender sees next.
    const read = await ok(h, A, ['read', id]);
    assert.deepEqual(
      read.messages.map((m) => m.id),
      ['m1', 'm2', 'm3'],
    );
    assert.deepEqual(
      read.markedRead,
      read.messages.map((m) => m.seq),
    );
    assert.equal((await ok(h, B, ['status', id, 'm1'])).status, 'read');
    assert.equal((await ok(h, A, ['read', id])).messages.length, 0);

    const readers = await h.ok(A, ['status']); // the sidecar still runs
    assert.equal(readers.ok, true);
    assertNoKeys(h, [A, B]);
  },
);

test(
  'tether mailbox: pairing gates sends from the command line; pairs, accept and unpair',
  { timeout: 60_000 },
  async (t) => {
    const h = new Harness(t);
    const host = await startDenoMailbox(hostDir);
    const A = h.dir('owner');
    const C = h.dir('carol');
    const id = (await ok(h, A, ['create'], { url: host.url })).mailbox;
    const url = `${host.url}/mailboxes/${id}`;

    // Not paired: refused before any request, naming the fix.
    const early = await mailbox(h, C, ['send', url, 'hi']);
    assert.equal(early.code, 2);
    assert.match(early.stderr, /not paired with mailbox/);

    // A pair request waits for the owner; the service refuses its sends until accepted.
    const req = await ok(h, C, ['pair', url, '--name', 'carol']);
    assert.equal(req.state, 'pending');
    const waiting = await mailbox(h, C, ['send', id, 'hi']);
    assert.equal(waiting.code, 2);
    assert.match(waiting.stderr, /unpaired_sender: pair request .* is waiting/);
    const pairs = await ok(h, A, ['pairs', id]);
    assert.deepEqual(
      pairs.pairs.map((p) => [p.pair, p.state]),
      [[req.pair, 'pending']],
    );
    await ok(h, A, ['pair', id, '--accept', req.pair]);
    assert.equal((await ok(h, C, ['send', id, 'hi', '--id', 'c1'])).status, 'stored');

    // Revoked: refused again.
    await ok(h, A, ['unpair', id, req.pair]);
    const revoked = await mailbox(h, C, ['send', id, 'again']);
    assert.equal(revoked.code, 2);
    assert.match(revoked.stderr, /unpaired_sender: the owner revoked/);

    // The owner key does not send; a sender cannot read or list; bad codes are refused.
    const ownerSends = await mailbox(h, A, ['send', id, 'x']);
    assert.equal(ownerSends.code, 2);
    const senderReads = await mailbox(h, C, ['read', id]);
    assert.equal(senderReads.code, 2);
    assert.match(senderReads.stderr, /holds no owner key/);
    const bad = await mailbox(h, h.dir('dave'), [
      'pair',
      url,
      'mbc_' + '0'.repeat(32),
      '--name',
      'd',
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bad_code/);
    // An unreachable service is exit 3, as the CLI documents.
    const down = await mailbox(h, h.dir('eve'), ['create'], { url: 'http://127.0.0.1:1' });
    assert.equal(down.code, 3);
    assertNoKeys(h, [A, C]);
  },
);

test(
  'tether mailbox: the next commands create and pair print run as printed from any folder (they carry --dir)',
  { timeout: 60_000 },
  async (t) => {
    const h = new Harness(t);
    const host = await startDenoMailbox(hostDir);
    const A = h.dir('owner');
    const B = h.dir('sender');
    const elsewhere = { env: { TETHER_AGENT_DIR: h.dir('elsewhere') } }; // not the dir we used
    /** The command after `label: tether ` in `text`, as argv words (the harness dirs are plain). */
    const printed = (text, label) => {
      const m = new RegExp(`${label}: tether (\\S.*?)( TEXT\\.\\.\\.)?$`, 'm').exec(text);
      assert.ok(m, `"${label}" in:\n${text}`);
      return m[1].split(' ');
    };
    const made = await h.run(A, ['create', '--url', host.url], { group: 'mailbox', json: false });
    assert.equal(made.code, 0, made.stderr);
    const issued = await h.cli(printed(made.stdout, 'pair a sender'), elsewhere);
    assert.equal(issued.code, 0, issued.stderr);
    const [url, code] = printed(issued.stdout, 'the sender runs').slice(2);
    const paired = await h.run(B, ['pair', url, code, '--name', 'bob'], {
      group: 'mailbox',
      json: false,
    });
    assert.equal(paired.code, 0, paired.stderr);
    const sent = await h.cli([...printed(paired.stdout, 'send with'), 'hello'], elsewhere);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /^stored \S+ in /);

    // No service named: the fix points at the shipped docs, not at a file of the repository.
    const none = await h.run(h.dir('eve'), ['create'], { group: 'mailbox', json: false });
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /--url http:\/\/HOST:PORT, or set TETHER_MAILBOX_URL .*docs\/mailbox\.md/,
    );
    assert.doesNotMatch(none.stderr, /web\/host/);
  },
);
