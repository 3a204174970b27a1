// A real tether sidecar and a hand-built ninja-p2p 0.2.2 peer (tests/node/lib/ninja_bus_peer.mjs,
// its envelopes from fixtures/bus/ninja.json) in one room on a real ws room relay: heartbeats,
// commands and their responses, history both ways, the shared-folder commands both ways
// (`tether agent pull` against its get-file answer, and its shares / list-files / get-file
// against our shares), files it sends unasked, and a swarm fetched from sparse ninja-p2p holders
// (tests/node/lib/ninja_swarm_peer.mjs). Every answer is checked in the public shape.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { Harness, roomSecretOption, waitFor } from './lib/agent-harness.mjs';
import WebSocket from 'ws';
import { createRelayTransport } from '../../web/peer/relay-transport.js';
import { NinjaBusPeer, ninjaExchanges, ninjaTexts, sha256Hex } from './lib/ninja_bus_peer.mjs';
import { NinjaSwarmPeer, ninjaFile } from './lib/ninja_swarm_peer.mjs';

const ME = 'tether-agent'; // the stream ids the fixtures' envelopes use
const NINJA = 'ninja-worker';

async function setUp(t) {
  const server = await startRoomServer();
  t.after(() => server.close());
  const h = new Harness(t);
  const A = h.dir('agent');
  const share = h.dir('docs');
  const outside = h.dir('outside');
  fs.mkdirSync(path.join(share, 'notes'));
  // The bytes the fixture's get_file_served exchange recorded.
  const plan = Buffer.from(ninjaExchanges.get_file_served.file.bytes_b64, 'base64');
  fs.writeFileSync(path.join(share, 'notes', 'plan.txt'), plan);
  fs.writeFileSync(path.join(outside, 'secret'), 'no');
  fs.symlinkSync(path.join(outside, 'secret'), path.join(share, 'escape'));
  await h.ok(A, ['share', 'add', 'docs', share]);
  await h.join(A, ME, server.url);
  const ninja = new NinjaBusPeer(server, NINJA);
  t.after(() => ninja.close());
  await waitFor('the sidecar sees the ninja-p2p peer', async () =>
    (await h.ok(A, ['peers'])).peers.some((p) => p.id === NINJA && p.open),
  );
  // It announces itself as ninja-p2p does (its announce names its shares).
  ninja.sendText(ME, ninjaTexts('command_response')[0]);
  return { server, h, A, share, plan, ninja };
}

test('ninja-p2p peer: its pings are ponged {pingId, pingTs, pongTs}, addressed to it', async (t) => {
  const { h, A, ninja } = await setUp(t);
  ninja.sendText(ME, ninjaTexts('heartbeat')[1]);
  const pong = await ninja.expect('a pong', (e) => e.type === 'pong');
  assert.equal(pong.to, NINJA);
  assert.equal(pong.from.streamId, ME);
  assert.equal(pong.payload.pingId, 'nPing00000001');
  assert.equal(pong.payload.pingTs, 31001);
  assert.ok(Number.isFinite(pong.payload.pongTs));
  await h.ok(A, ['leave']);
});

test('ninja-p2p peer: its command_response {requestId} to our command is found by `receipt`', async (t) => {
  const { h, A, ninja } = await setUp(t);
  const sent = await h.ok(A, [
    'send',
    NINJA,
    'status',
    '--type',
    'command',
    '--payload-json',
    '{"command":"status"}',
  ]);
  const cmd = await ninja.expect('our command', (e) => e.type === 'command' && e.id === sent.id);
  ninja.send(ME, 'command_response', { requestId: cmd.id, ok: true, result: { state: 'idle' } });
  await waitFor(
    'the receipt',
    async () => (await h.ok(A, ['receipt', NINJA, sent.id])).receipts.length === 1,
  );
  const r = (await h.ok(A, ['receipt', NINJA, sent.id])).receipts[0];
  assert.equal(r.failed, false);
  await h.ok(A, ['leave']);
});

test('ninja-p2p peer: its skill_update is not mail (the public sidecar keeps it out of the inbox too)', async (t) => {
  const { h, A, ninja } = await setUp(t);
  ninja.send(ME, 'skill_update', {
    skills: ['review'],
    status: 'busy',
    statusDetail: 'reviewing PR 7',
    agent: { runtime: 'node', summary: 'a worker' },
  });
  // One connection delivers in order: once the chat is in, the update before it was handled.
  const chat = ninja.send(ME, 'chat', { text: 'after the update' });
  await waitFor('the chat is in', async () => (await h.ok(A, ['notify'])).unread >= 1);
  const mail = (await h.ok(A, ['read'])).messages.map((m) => [m.envelope.type, m.envelope.id]);
  assert.deepEqual(mail, [['chat', chat.id]]);
  // What it changed is what `peers` shows of it now (the core applies it to the announce).
  const peer = (await h.ok(A, ['peers'])).peers.find((p) => p.id === NINJA);
  assert.equal(peer.status, 'busy');
  assert.deepEqual(peer.skills, ['review']);
  await h.ok(A, ['leave']);
});

test('ninja-p2p peer: `send --type command WORD`, `--type ack ID` and `respond` reach it as {command, args}, {messageId} and {requestId, ok, result | error}', async (t) => {
  const { h, A, ninja } = await setUp(t);
  const got = (id) => ninja.expect(`our ${id}`, (e) => e.id === id);
  const cmd = await h.ok(A, [
    'send',
    NINJA,
    '--type',
    'command',
    'status',
    '--args-json',
    '{"verbose":true}',
  ]);
  assert.deepEqual((await got(cmd.id)).payload, { command: 'status', args: { verbose: true } });
  const bare = await h.ok(A, ['send', NINJA, '--type', 'command', 'ping']);
  assert.deepEqual((await got(bare.id)).payload, { command: 'ping' });
  const ack = await h.ok(A, ['send', NINJA, '--type', 'ack', 'nMsg0001']);
  assert.deepEqual((await got(ack.id)).payload, { messageId: 'nMsg0001' });

  // Its command lands in our inbox; we answer it by its id, as a result and as an error.
  const asked = ninja.send(ME, 'command', { command: 'review', args: { pr: 7 } });
  await waitFor('its command is in', async () => (await h.ok(A, ['notify'])).unread >= 1);
  const read = await h.run(A, ['read'], { json: false });
  assert.match(read.stdout, new RegExp(`command ${asked.id}: review \\{"pr":7\\}$`, 'm'));
  const yes = await h.ok(A, ['respond', NINJA, asked.id, 'looks', 'good']);
  assert.deepEqual((await got(yes.id)).payload, {
    requestId: asked.id,
    ok: true,
    result: 'looks good',
  });
  const json = await h.ok(A, ['respond', NINJA, asked.id, '--result-json', '{"approved":true}']);
  assert.deepEqual((await got(json.id)).payload, {
    requestId: asked.id,
    ok: true,
    result: { approved: true },
  });
  const no = await h.ok(A, ['respond', NINJA, asked.id, '--error', 'no', 'time']);
  const noEnv = await got(no.id);
  assert.equal(noEnv.type, 'command_response');
  assert.deepEqual(noEnv.payload, { requestId: asked.id, ok: false, error: 'no time' });
  await h.ok(A, ['leave']);
});

test('ninja-p2p peer: history is one history_replay per message, payload the original, both ways', async (t) => {
  const { h, A, ninja } = await setUp(t);
  const sent = await h.ok(A, ['send', NINJA, 'hello there']);
  await ninja.expect('our direct', (e) => e.id === sent.id);
  // We ask: it replays one history_replay per message; we take those for us.
  ninja.on((peer, env) => {
    if (env.type !== 'history_request') return;
    assert.deepEqual(env.payload, { count: 3 });
    for (const text of ninjaTexts('history_accepted').slice(1, 4)) ninja.sendText(ME, text);
  });
  const hist = await h.ok(A, ['history', NINJA, '--count', '3']);
  assert.deepEqual(
    hist.replayed.map((m) => [m.id, m.payload.text]),
    [
      ['nOld00000001', 'from before you came'],
      ['nOld00000002', 'while you were away'],
    ],
  );

  // It asks us: every replay is addressed to it and carries one original envelope.
  ninja.send(ME, 'history_request', { count: 5 });
  await waitFor(
    'our replays',
    () => ninja.got.filter(({ env }) => env.type === 'history_replay').length >= 1,
  );
  await new Promise((res) => setTimeout(res, 300));
  const replays = ninja.got
    .filter(({ env }) => env.type === 'history_replay')
    .map(({ env }) => env);
  assert.ok(replays.length >= 1);
  for (const rp of replays) {
    assert.equal(rp.to, NINJA);
    assert.equal(rp.payload.v, 1);
    assert.equal(typeof rp.payload.id, 'string');
    assert.equal(rp.payload.messages, undefined, 'never a batch');
  }
  assert.ok(
    replays.some((rp) => rp.payload.id === sent.id),
    'our direct to it is in its replay',
  );
  await h.ok(A, ['leave']);
});

test('ninja-p2p peer: it browses and fetches our shares (shares, list-files, get-file) within their containment', async (t) => {
  const { h, A, plan, ninja } = await setUp(t);
  const responseTo = (id) =>
    ninja.expect(
      `the response to ${id}`,
      (e) => e.type === 'command_response' && e.payload.requestId === id,
    );

  // shares and list-files: command_response {requestId, ok, result}, containment applied.
  const shares = ninja.send(ME, 'command', { command: 'shares' });
  assert.deepEqual((await responseTo(shares.id)).payload.result.shares, [{ name: 'docs' }]);
  const root = ninja.send(ME, 'command', { command: 'list-files', args: { share: 'docs' } });
  const listing = (await responseTo(root.id)).payload;
  assert.equal(listing.ok, true);
  assert.deepEqual(
    listing.result.entries,
    [{ name: 'notes', path: 'notes', type: 'dir', size: null }],
    'the escaping link is left out',
  );
  const sub = ninja.send(ME, 'command', {
    command: 'List-Files',
    args: { share: 'DOCS', path: 'notes' },
  });
  assert.deepEqual((await responseTo(sub.id)).payload.result.entries, [
    { name: 'plan.txt', path: 'notes/plan.txt', type: 'file', size: plan.length },
  ]);

  // get-file: an untagged file_offer, its chunks and file_complete, then the response naming it.
  const [get, badGet] = ninjaTexts('get_file_served').slice(1, 3);
  ninja.sendText(ME, get);
  const done = await responseTo('nGetFile0001');
  assert.equal(done.payload.ok, true);
  const offer = ninja.got.find(({ env }) => env.type === 'file_offer')?.env;
  assert.ok(offer, 'an offer came first');
  assert.equal(offer.topic, null);
  assert.equal(offer.payload.name, 'plan.txt');
  assert.equal(done.payload.result.transferId, offer.payload.transferId);
  assert.equal(done.payload.result.sha256, sha256Hex(plan));
  const chunks = ninja.got.filter(
    ({ env }) => env.type === 'file_chunk' && env.payload.transferId === offer.payload.transferId,
  );
  assert.deepEqual(
    Buffer.concat(chunks.map(({ env }) => Buffer.from(env.payload.data, 'base64'))),
    plan,
  );
  assert.ok(
    ninja.got.some(
      ({ env }) => env.type === 'file_complete' && env.payload.sha256 === sha256Hex(plan),
    ),
  );
  ninja.sendText(ME, badGet);
  assert.deepEqual((await responseTo('nGetFile0002')).payload, {
    requestId: 'nGetFile0002',
    ok: false,
    error: 'get-file requires args.share and args.path',
  });
  const esc = ninja.send(ME, 'command', {
    command: 'get-file',
    args: { share: 'docs', path: 'escape' },
  });
  const escaped = (await responseTo(esc.id)).payload;
  assert.equal(escaped.ok, false);
  assert.match(escaped.error, /outside the share/);
  await h.ok(A, ['leave']);
});

test('ninja-p2p peer: `tether agent pull` asks it with get-file and takes its untagged answer', async (t) => {
  const { h, A, ninja } = await setUp(t);
  // Its answer: the offer, 12,000-byte chunks and completion recorded in the fixture, then its response.
  const pulled = ninjaExchanges.get_file_pulled;
  ninja.on((peer, env) => {
    if (env.type !== 'command' || env.payload?.command !== 'get-file') return;
    assert.deepEqual(env.payload.args, { share: 'docs', path: 'guide.md' });
    for (const text of ninjaTexts('get_file_pulled').slice(1)) ninja.sendText(ME, text);
    ninja.send(ME, 'command_response', {
      requestId: env.id,
      ok: true,
      result: { share: 'docs', path: 'guide.md', transferId: pulled.file.transferId },
    });
  });
  const dest = h.dir('dest');
  const r = await h.ok(A, ['pull', NINJA, 'docs', 'guide.md', '--to', dest]);
  const want = Buffer.from(pulled.file.bytes_b64, 'base64');
  assert.deepEqual(fs.readFileSync(r.savedPath), want);
  const ack = await ninja.expect(
    'our file_ack',
    (e) => e.type === 'file_ack' && e.payload.transferId === pulled.file.transferId,
  );
  assert.equal(ack.payload.ok, true);
  assert.equal(ack.payload.sha256, sha256Hex(want));
  assert.deepEqual(fs.readdirSync(dest), ['guide.md']);
  await h.ok(A, ['leave']);
});

test('ninja-p2p peer: a file it sends unasked is taken within the caps, or refused with file_ack {ok: false}', async (t) => {
  const { h, A, ninja } = await setUp(t);
  // Within the caps: into downloads/ and the inbox, and acked.
  const note = Buffer.from('a note, sent unasked\n');
  const tid = 'dW5hc2tlZC1ub3Rl';
  ninja.send(ME, 'file_offer', {
    transferId: tid,
    name: 'note.txt',
    mimeType: 'text/plain',
    kind: 'file',
    size: note.length,
    sha256: sha256Hex(note),
    chunkSize: 12000,
    totalChunks: 1,
  });
  ninja.send(ME, 'file_chunk', {
    transferId: tid,
    index: 0,
    totalChunks: 1,
    data: note.toString('base64'),
  });
  ninja.send(ME, 'file_complete', {
    transferId: tid,
    totalChunks: 1,
    size: note.length,
    sha256: sha256Hex(note),
  });
  const took = await ninja.expect(
    'the ack of the unasked file',
    (e) => e.type === 'file_ack' && e.payload.transferId === tid,
  );
  assert.equal(took.payload.ok, true);
  const mail = (await h.ok(A, ['read'])).messages.filter((m) => m.envelope.type === 'file_offer');
  assert.equal(mail.length, 1);
  assert.equal(mail[0].envelope.payload.transferId, tid);
  assert.deepEqual(fs.readFileSync(mail[0].received.savedPath), note);
  assert.equal(
    path.dirname(mail[0].received.savedPath),
    fs.realpathSync(path.join(A, 'downloads')),
  );

  // Over the caps: refused with file_ack {ok: false, error}, never dropped without a word.
  ninja.sendText(ME, ninjaTexts('unsolicited_offer_refused')[1]);
  const no = await ninja.expect(
    'the refusal',
    (e) => e.type === 'file_ack' && e.payload.transferId === 'dW5zb2xpY2l0ZWQ',
  );
  assert.equal(no.payload.ok, false);
  assert.match(no.payload.error, /268435456/);
  // A chunk for a transfer never offered: refused once, by its id.
  ninja.send(ME, 'file_chunk', {
    transferId: 'bmV2ZXItb2ZmZXJlZA',
    index: 0,
    totalChunks: 1,
    data: 'QUJD',
  });
  const stray = await ninja.expect(
    'the stray chunk refused',
    (e) => e.type === 'file_ack' && e.payload.transferId === 'bmV2ZXItb2ZmZXJlZA',
  );
  assert.equal(stray.payload.ok, false);
  await h.ok(A, ['leave']);
});

test('ninja-p2p peers: `swarm fetch` takes a 13-chunk file from two sparse holders by their golden bitfields; a ninja-p2p downloader then finds every chunk in ours', async (t) => {
  const server = await startRoomServer();
  t.after(() => server.close());
  const h = new Harness(t);
  const A = h.dir('agent');
  await h.join(A, ME, server.url);
  const vectors = Object.fromEntries(
    JSON.parse(
      fs.readFileSync(new URL('../../fixtures/swarm/bitfields.json', import.meta.url), 'utf8'),
    ).bitfields.map((v) => [v.name, v]),
  );
  const bytes = Buffer.alloc(13 * 1024 - 200).map((_, i) => (i * 41 + (i >> 7)) & 255);
  const file = ninjaFile(bytes, { name: 'split.bin' });
  const relayed = (id) => {
    const tr = createRelayTransport({
      url: `${server.url}?writer=${id}&kind=agent`,
      room: 'lab',
      selfId: id,
      WebSocket,
      reconnectMinMs: 20,
      reconnectMaxMs: 200,
      ...roomSecretOption(),
    });
    t.after(() => tr.close());
    return tr;
  };
  const a = vectors.sparse_13;
  const b = vectors.sparse_13_complement;
  const holders = [
    new NinjaSwarmPeer(relayed('ninja-a'), file, { holds: a.held, chunksB64: a.chunks }),
    new NinjaSwarmPeer(relayed('ninja-b'), file, { holds: b.held, chunksB64: b.chunks }),
  ];
  await waitFor('the sidecar has the offer', async () =>
    Object.keys((await h.ok(A, ['swarm', 'list'])).offers).includes(file.offer.fileId),
  );
  const dest = h.dir('dest');
  // Bounded: a fetch that cannot find its chunks would wait for them forever.
  const r = await Promise.race([
    h.run(A, ['swarm', 'fetch', file.offer.fileId, '--to', dest]),
    new Promise((_, reject) =>
      setTimeout(
        () =>
          reject(
            new Error('swarm fetch did not finish in 60 s: chunks asked of peers that lack them?'),
          ),
        60_000,
      ).unref(),
    ),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(fs.readFileSync(path.join(dest, 'split.bin')), bytes);
  for (const holder of holders)
    assert.equal(holder.askedForMissing, 0, `${holder.id} was asked only for chunks it holds`);

  const fetcher = new NinjaSwarmPeer(relayed('ninja-c'), file);
  // Complete, and holding our bitfield: it may finish from the two holders before ours arrives
  // (over the sealed transport each lane opens after its epoch handshake, a round trip later).
  await waitFor('the ninja-p2p downloader', () => fetcher.complete() && fetcher.views.has(ME), {
    timeoutMs: 30_000,
  });
  assert.deepEqual(fetcher.bytes(), bytes);
  assert.deepEqual(
    [...fetcher.views.get(ME)].sort((x, y) => x - y),
    [...Array(13).keys()],
  );
  await h.ok(A, ['leave']);
});
