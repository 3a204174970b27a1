// Every message of the agent command line says what is true and what to do: help and flag
// errors, the handoff answer, sends and pulls while our own link is down, a send to a name the
// room never saw, the outbox, swarm fetches of a file we hold, swarm list on the offerer,
// receipts, file acks, file modes, history, peers and read. Each test pins the facts in the
// wording (names, ids, states, exit codes), not the prose around them.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { GROUPS } from '../../web/agent/commands/index.js';
import { Harness, waitFor } from './lib/agent-harness.mjs';

async function room(t) {
  const server = await startRoomServer();
  t.after(() => server.close());
  return server;
}

const seesOpen = (h, dir, id) => async () =>
  (await h.ok(dir, ['peers'])).peers.some(
    (p) => p.id === id && p.open && p.skills.includes('handoff-v1'),
  );

test('help: tether --help and every group, command and subcommand --help exit 0 with their usage', async (t) => {
  const h = new Harness(t);
  const top = await h.cli(['--help']);
  assert.equal(top.code, 0);
  for (const g of GROUPS) assert.match(top.stdout, new RegExp(`^  ${g.name} `, 'm'));
  for (const g of GROUPS) {
    const gh = await h.cli([g.name, '--help']);
    assert.equal(gh.code, 0, `${g.name} --help`);
    if (g.command) {
      // a group that is one command (`tether mcp`): its help is that command's
      assert.match(gh.stdout, new RegExp(`^usage: tether ${g.name} `));
      continue;
    }
    for (const c of g.commands) {
      assert.match(
        gh.stdout,
        new RegExp(`^  ${c.name}\\b`, 'm'),
        `${g.name} --help lists ${c.name}`,
      );
      const forms = c.subcommands ? c.subcommands.map((s) => [c.name, s.name]) : [[c.name]];
      for (const words of [[c.name], ...(c.subcommands ? forms : [])]) {
        const r = await h.cli([g.name, ...words, '--help']);
        assert.equal(r.code, 0, `${g.name} ${words.join(' ')} --help`);
        assert.match(
          r.stdout,
          new RegExp(`^usage: tether ${g.name} ${words.join(' ')}\\b`),
          words.join(' '),
        );
        assert.equal(r.stderr, '');
        // The ticket goes in $TETHER_TICKET: no help puts it on a command line, where `ps` and
        // npm's debug log see it, and no usage shows --ticket as required.
        assert.doesNotMatch(r.stdout, /--ticket "\$\(/, `${words.join(' ')} --help`);
        assert.doesNotMatch(r.stdout.split('\n')[0], /(?<!\[)--ticket TICKET/, words.join(' '));
      }
    }
  }
  const none = await h.cli([]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^tether: give a command group\nusage: tether <group> <command>/);
});

test('flag and command typos: one line naming the closest valid flag, then that command’s usage only', async (t) => {
  const h = new Harness(t);
  const A = h.dir('alice');
  const lines = (s) => s.trim().split('\n');
  let r = await h.run(A, ['send', 'bob', 'hi', '--tpoic', 'x'], { json: false });
  assert.equal(r.code, 2);
  assert.equal(
    lines(r.stderr)[0],
    'tether agent send: unknown flag --tpoic; did you mean --topic?',
  );
  assert.match(lines(r.stderr)[1], /^usage: tether agent send PEER TEXT\.\.\. /);
  assert.ok(lines(r.stderr).length <= 3, r.stderr);
  assert.doesNotMatch(r.stderr, /tether agent (read|join)/, 'not the whole usage');
  r = await h.run(A, ['swarm', 'fetch', 'x', '--too', 'd'], { json: false });
  assert.equal(
    lines(r.stderr)[0],
    'tether agent swarm fetch: unknown flag --too; did you mean --to?',
  );
  assert.match(lines(r.stderr)[1], /^usage: tether agent swarm fetch FILE_ID \[--to DIR\]$/);
  r = await h.run(A, ['read', '--take'], { json: false });
  assert.equal(r.code, 2);
  assert.equal(lines(r.stderr)[0], 'tether agent read: --take needs a value: --take N');
  r = await h.run(A, ['sned', 'bob', 'x'], { json: false });
  assert.equal(r.code, 2);
  assert.equal(lines(r.stderr)[0], "tether agent: unknown command 'sned'; did you mean 'send'?");
  r = await h.cli(['agnet', 'read']);
  assert.equal(r.code, 2);
  assert.equal(lines(r.stderr)[0], "tether: unknown command group 'agnet'; did you mean 'agent'?");
  r = await h.run(A, ['outbox', 'dorp'], { json: false });
  assert.equal(
    lines(r.stderr)[0],
    "tether agent outbox: unknown outbox command 'dorp'; did you mean 'drop'?",
  );
  // No Node parser text, no broken quotes.
  assert.doesNotMatch(h.transcript.join('\n'), /ERR_PARSE_ARGS|To specify a positional argument/);
});

test('our own link down: send queues naming our outage, pull refuses naming it; a peer is not blamed', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  await h.join(A, 'alice', server.url);
  await h.join(B, 'bob', server.url);
  await waitFor('alice sees bob', seesOpen(h, A, 'bob'));
  await server.close(); // the relay is gone: our reconnects are refused
  await waitFor('alice knows her link is down', async () => {
    const st = await h.ok(A, ['status']);
    return !st.connected && st.link?.failure?.kind === 'refused';
  });
  const s = await h.run(A, ['send', 'bob', 'are', 'you', 'there'], { json: false });
  assert.equal(s.code, 0);
  assert.match(
    s.stdout,
    /^queued [\w-]+ for bob: this sidecar is not connected to the relay \(connection refused by 127\.0\.0\.1:\d+: nothing listens there/,
  );
  assert.doesNotMatch(s.stdout + s.stderr, /offline|is it online|never/);
  const p = await h.run(A, ['pull', 'bob', 'proj', 'x.txt', '--to', A], { json: false });
  assert.equal(p.code, 2);
  assert.match(
    p.stderr,
    /^tether agent pull: the command to 'bob' was not sent: this sidecar is not connected to the relay \(connection refused/,
  );
  assert.doesNotMatch(p.stderr, /did not accept|is it online/);
});

test('send to a name never seen in the room warns with the drop command; outbox lists and drops', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  await h.join(A, 'alice', server.url);
  await h.join(B, 'bob', server.url);
  await waitFor('alice sees bob', seesOpen(h, A, 'bob'));
  const z = await h.run(A, ['send', 'zed', 'hello', 'zed'], { json: false });
  assert.equal(z.code, 0);
  const id = /^queued ([\w-]+) for zed: 'zed' is not in room 'lab' now/.exec(z.stdout)?.[1];
  assert.ok(id, z.stdout);
  assert.match(
    z.stderr,
    new RegExp(
      `^warning: nobody named 'zed' has been in this room since this agent joined it \\(seen: bob\\); .*\`tether agent outbox drop ${id} --dir ${A}\``,
    ),
  );
  // The drop command as printed, run as printed: it names this state dir, not the default one.
  const printedDrop = /Drop it with `tether ([^`]+)`/.exec(z.stderr)[1].split(' ');
  // Bob has been seen: no warning for him, even once he is gone.
  await h.ok(B, ['leave']);
  await waitFor('bob gone', async () => !(await h.ok(A, ['peers'])).peers.some((p) => p.open));
  const b = await h.run(A, ['send', 'bob', 'later'], { json: false });
  assert.equal(b.stderr, '');
  assert.match(b.stdout, /^queued [\w-]+ for bob: 'bob' is not in room 'lab' now/);
  const z2 = await h.ok(A, ['send', 'zed', 'again']);
  assert.equal(z2.unknownPeer, true);

  const list = await h.run(A, ['outbox'], { json: false });
  assert.equal(list.code, 0);
  assert.deepEqual(
    list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t').slice(0, 2)),
    [
      [id, 'zed'],
      [b.stdout.split(' ')[1], 'bob'],
      [z2.id, 'zed'],
    ],
  );
  assert.match(list.stdout, /\thello zed$/m);
  const drop = await h.cli(printedDrop, { env: { TETHER_AGENT_DIR: h.dir('elsewhere') } });
  assert.equal(drop.code, 0, drop.stderr);
  assert.equal(drop.stdout.trim(), 'dropped 1 queued message(s): they will not be sent');
  const missing = await h.run(A, ['outbox', 'drop', id], { json: false });
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    new RegExp(`nothing queued with id ${id} \\(sent already, or a typo\\?\\)`),
  );
  assert.deepEqual((await h.ok(A, ['outbox', 'drop', '--peer', 'zed'])).dropped, [z2.id]);
  assert.deepEqual((await h.ok(A, ['notify'])).queuedBy, { bob: 1 });
  // Without a sidecar the state dir is edited directly.
  await h.ok(A, ['leave']);
  assert.equal((await h.ok(A, ['outbox', 'drop', '--peer', 'bob'])).dropped.length, 1);
  assert.equal((await h.ok(A, ['notify'])).queued, 0);
  const empty = await h.run(A, ['outbox', 'drop'], { json: false });
  assert.equal(empty.code, 2);
  assert.match(
    empty.stderr,
    /give the ids to drop .* or --peer P\nusage: tether agent outbox drop/,
  );
});

test('handoff, receipt, history, peers and read: each says what happened', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  await h.join(A, 'alice', server.url, ['--name', 'Alice Liddell']);
  await h.join(B, 'bob', server.url, ['--name', 'Bob the Builder']);
  await waitFor('alice sees bob with handoff-v1', seesOpen(h, A, 'bob'));
  const peers = await h.run(A, ['peers'], { json: false });
  assert.equal(peers.stdout.trim(), 'bob\tBob the Builder\tonline\tagent\thandoff-v1');

  const ho = await h.run(A, ['handoff', 'bob', 'review', 'PR', '7'], { json: false });
  assert.equal(ho.code, 0);
  const hid =
    /^handoff ([\w-]+) sent to bob; retried until bob confirms it stored it, or until \d{4}-/.exec(
      ho.stdout,
    )?.[1];
  assert.ok(hid, ho.stdout);
  assert.doesNotMatch(ho.stdout, /no current handoff-v1/);
  await waitFor('stored', async () => (await h.ok(A, ['handoffs'])).handoffs[0].state === 'stored');
  const rh = await h.run(A, ['receipt', 'bob', hid], { json: false });
  assert.match(
    rh.stdout.trim(),
    new RegExp(`^handoff ${hid}: stored by bob at \\d{4}-\\d\\d-\\d\\dT`),
  );
  assert.doesNotMatch(rh.stdout, /\{\}/);

  const s = await h.ok(A, ['send', 'bob', 'deploy', '--type', 'command', '--topic', 'ops']);
  await waitFor('bob has 2', async () => (await h.ok(B, ['notify'])).unread === 2);
  const read = await h.run(B, ['read'], { json: false });
  assert.match(
    read.stdout,
    new RegExp(`\\] alice \\(Alice Liddell\\) command #ops ${s.id}: deploy$`, 'm'),
  );
  await h.ok(B, [
    'send',
    'alice',
    'no',
    '--type',
    'command_response',
    '--payload-json',
    JSON.stringify({ messageId: s.id, ok: false, error: 'not today' }),
  ]);
  await waitFor('alice has the answer', async () => (await h.ok(A, ['notify'])).unread === 1);
  const rs = await h.run(A, ['receipt', 'bob', s.id], { json: false });
  assert.match(
    rs.stdout.trim(),
    /^command_response [\w-]+ from bob at \d{4}-.* \(inbox\): FAILED: not today$/,
  );

  // Broadcast, then bob restarts (his bus forgets) and asks alice: both replays are old to him.
  await h.ok(A, ['broadcast', 'all', 'hands']);
  await waitFor('bob has it', async () => (await h.ok(B, ['notify'])).unread === 1);
  await h.ok(B, ['read']);
  await h.ok(B, ['leave']);
  await h.join(B, 'bob', server.url);
  await waitFor('bob sees alice', seesOpen(h, B, 'alice'));
  const old = await h.run(B, ['history', 'alice'], { json: false });
  assert.match(
    old.stdout,
    /^had {2}\[.*\] alice \(Alice Liddell\) \(broadcast\) chat [\w-]+: all hands$/m,
  );
  assert.match(old.stdout, /^0 of \d+ replayed message\(s\) were new/m);
  assert.equal((await h.ok(B, ['history', 'alice'])).fresh.length, 0);
  // Carol joins late: the broadcast is new to her.
  const C = h.dir('carol');
  await h.join(C, 'carol', server.url);
  await waitFor('carol sees alice', seesOpen(h, C, 'alice'));
  const fresh = await h.run(C, ['history', 'alice'], { json: false });
  assert.match(
    fresh.stdout,
    /^NEW {2}\[.*\] alice \(Alice Liddell\) \(broadcast\) chat [\w-]+: all hands$/m,
  );
  assert.match(fresh.stdout, /^1 of 1 replayed message\(s\) were new/m);
});

test('files: pull and swarm save with one mode; file_ack is not mail; a held file is copied, not "already transferring"; the offerer lists its offer', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  const share = h.dir('share');
  const data = randomBytes(300_000);
  fs.writeFileSync(path.join(share, 'notes.bin'), data);
  const big = path.join(share, 'model.bin');
  fs.writeFileSync(big, randomBytes(700_000));
  const sha = createHash('sha256').update(fs.readFileSync(big)).digest('hex');
  await h.ok(A, ['share', 'add', 'proj', share]);
  await h.join(A, 'alice', server.url);
  await h.join(B, 'bob', server.url);
  await waitFor('bob sees alice', seesOpen(h, B, 'alice'));

  const offer = await h.ok(A, ['swarm', 'offer', big]);
  const own = await h.run(A, ['swarm', 'list'], { json: false });
  assert.equal(own.stdout.trim(), `${sha}\t700000\tmodel.bin\tus`);

  const d1 = h.dir('d1');
  const pulled = await h.ok(B, ['pull', 'alice', 'proj', 'notes.bin', '--to', d1]);
  await waitFor('bob saw the offer', async () =>
    Object.keys((await h.ok(B, ['swarm', 'list'])).offers).includes(offer.fileId),
  );
  const fetched = await h.ok(B, ['swarm', 'fetch', sha, '--to', d1]);
  const mode = (p) => fs.statSync(p).mode & 0o777;
  assert.equal(mode(pulled.savedPath), mode(fetched.path), 'one mode whichever path brought it');
  assert.notEqual(mode(pulled.savedPath) & 0o044, 0, 'not the 0600 of a part file');
  // The owner's inbox holds no file_ack; its log says the pull ended.
  await waitFor('alice logged the ack', () =>
    /'bob' saved proj\/notes\.bin/.test(fs.readFileSync(path.join(A, 'sidecar.log'), 'utf8')),
  );
  assert.equal((await h.ok(A, ['notify'])).unread, 0);

  // Again, into another folder: bob holds a verified copy, so it is copied, not refused.
  const d2 = h.dir('d2');
  const again = await h.run(B, ['swarm', 'fetch', sha, '--to', d2], { json: false });
  assert.equal(again.code, 0, again.stderr);
  assert.match(
    again.stdout,
    new RegExp(
      `^saved ${d2}/model\\.bin \\(700000 bytes, sha256 verified; copied from ${d1}/model\\.bin, which this sidecar already holds\\)`,
    ),
  );
  assert.doesNotMatch(again.stdout + again.stderr, /already transferring/);
  assert.ok(fs.readFileSync(path.join(d2, 'model.bin')).equals(fs.readFileSync(big)));
  assert.equal(mode(path.join(d2, 'model.bin')), mode(fetched.path));
  // And the offerer fetching its own file copies it from the offered path.
  const d3 = h.dir('d3');
  const self = await h.ok(A, ['swarm', 'fetch', sha, '--to', d3]);
  assert.equal(self.copiedFrom, big);
  assert.deepEqual(fs.readdirSync(d3), ['model.bin'], 'no part file left');
});
