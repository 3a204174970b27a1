// The sidecar's share and pull concern (web/agent/sidecar/shares.js, pull.js) over the real
// tether/bus, with the transport, outbox and mailbox replaced by recorders: what a served file's
// offer says it is, how a path is read on both ends, and how often a failed pull refuses.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { bus, makeEnvelope, useBus } from '../../web/agent/envelope.js';
import { fileType } from '../../web/agent/file-type.js';
import { Shares } from '../../web/agent/sidecar/shares.js';
import { stateDirs } from '../../web/agent/store.js';

const OWNER = 'owner';
const from = (streamId) => ({ streamId, role: 'agent', name: streamId, instanceId: 'i1' });

/** A Shares concern for `me` in a fresh state dir, everything it sends recorded in `sent`. */
async function concern(t, me, shares = {}, { maxMessageSize } = {}) {
  assert.ok(await useBus(), 'tether/bus loads (make wasm)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-pull-units-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.dirname(stateDirs(dir).shares), { recursive: true });
  fs.writeFileSync(stateDirs(dir).shares, JSON.stringify(shares));
  const sent = []; // {via, to, type, payload}
  const transport = {
    send(to, text) {
      const e = JSON.parse(text);
      sent.push({
        via: 'transport',
        to,
        type: e.type,
        payload: e.payload,
        bytes: Buffer.byteLength(text),
      });
      return true;
    },
    openPeers: () => [OWNER, 'puller'],
    ...(maxMessageSize ? { maxMessageSize: () => maxMessageSize } : {}),
  };
  const s = new Shares({ dir, from: from(me), log: () => {}, whyNotNow: () => null });
  s.start(bus(), transport, {
    bus: {
      respond: (env, outcome) =>
        sent.push({ via: 'respond', to: env.from.streamId, type: 'command_response', outcome }),
    },
    outbox: { enqueue: (to, type, payload) => sent.push({ via: 'outbox', to, type, payload }) },
    mailbox: { store: () => {} },
    room: 'lab',
  });
  const receive = (peer, type, payload) => {
    const e = makeEnvelope({ from: from(peer), type, to: me, payload });
    assert.ok(e.ok, e.detail);
    return s.receive(e.env, { peer });
  };
  return { dir, s, sent, receive };
}

/** The owner's side of a transfer of `bytes` named `name`, as tether/bus plans it. */
function plan(bytes, name, chunkSize = 1024) {
  const p = bus().planFileSend({ bytes: new Uint8Array(bytes), name, chunkSize });
  assert.ok(p.ok, p.detail);
  const chunks = [...Array(p.plan.offer.totalChunks).keys()].map((i) => p.plan.chunk(i));
  p.plan.dispose();
  return { offer: p.plan.offer, chunks, complete: p.plan.complete };
}

/** A puller whose pull of `rel` was asked; returns the pull id and where it saves. */
async function asked(t, rel) {
  const c = await concern(t, 'puller');
  const dest = path.join(c.dir, 'dest');
  fs.mkdirSync(dest);
  const r = c.s.pulls.start(OWNER, 'docs', rel, dest);
  assert.ok(r.ok, r.error);
  return { ...c, id: r.pull, dest };
}

test('fileType: the extension picks the MIME type; images are kind image; unknown is octet-stream', () => {
  assert.deepEqual(fileType('shot.PNG'), { mimeType: 'image/png', kind: 'image' });
  assert.deepEqual(fileType('a.jpeg'), { mimeType: 'image/jpeg', kind: 'image' });
  assert.deepEqual(fileType('logo.svg'), { mimeType: 'image/svg+xml', kind: 'image' });
  assert.deepEqual(fileType('notes.md'), { mimeType: 'text/markdown', kind: 'file' });
  assert.deepEqual(fileType('a.txt'), { mimeType: 'text/plain', kind: 'file' });
  assert.deepEqual(fileType('doc.pdf'), { mimeType: 'application/pdf', kind: 'file' });
  assert.deepEqual(fileType('data.json'), { mimeType: 'application/json', kind: 'file' });
  assert.deepEqual(fileType('data.bin'), { mimeType: 'application/octet-stream', kind: 'file' });
  assert.deepEqual(fileType('README'), { mimeType: 'application/octet-stream', kind: 'file' });
  assert.deepEqual(fileType('constructor'), {
    mimeType: 'application/octet-stream',
    kind: 'file',
  });
});

// The bus core reads a share path (src/bus/shares.hpp share_path) as path.posix.normalize reads
// it after the public implementation's trim and backslash rule: checked against Node's own.
test('the core reads share paths as the owner does: trimmed, backslashes as slashes, dots folded', async () => {
  assert.ok(await useBus(), 'tether/bus loads (make wasm)');
  const api = bus();
  const node = (p) => {
    const n = path.posix.normalize(p.replace(/\\/g, '/').trim());
    return n === '.' ? '' : n.replace(/^\/+|\/+$/g, '');
  };
  const cases = [
    ['a\\b.txt', 'a/b.txt'],
    [' guide.md ', 'guide.md'],
    ['\u00a0guide.md\u3000', 'guide.md'],
    ['/notes/', 'notes'],
    ['notes/./plan.txt', 'notes/plan.txt'],
    ['.', ''],
    ['', ''],
    ['../x', '../x'],
    ['a/../../x', '../x'],
    ['/../x', 'x'],
    ['a//b///c/', 'a/b/c'],
    ['a/b/..', 'a'],
    ['./..', '..'],
    ['\\\\server\\share\\f', 'server/share/f'],
    ['..a/b..', '..a/b..'],
  ];
  for (const [raw, want] of cases) {
    assert.equal(node(raw), want, `Node reads ${JSON.stringify(raw)} so`);
    assert.equal(api.sharePath(raw), want, JSON.stringify(raw));
  }
  // A get-file as the owner reads it, and as the puller writes it.
  const getFile = (p) =>
    api.parseShareCommand(
      makeEnvelope({
        from: from('asker'),
        type: 'command',
        payload: { command: 'get-file', args: { share: 'docs', path: p } },
      }).env,
    );
  const cmd = getFile('a\\..\\b.txt');
  assert.equal(cmd.path, 'b.txt');
  // The puller sends what it was given (trimmed) and reads it as the owner will.
  const ask = api.shareCommandPayload({ command: 'get-file', share: 'docs', path: ' x\\y.md ' });
  assert.deepEqual(ask.payload.args, { share: 'docs', path: 'x\\y.md' });
  const root = getFile('./');
  assert.equal(root.ok, false);
  assert.match(root.detail, /get-file names a file inside the share/);
});

/** An owner sharing `files` (name -> content) as docs; serve(path) answers a get-file of it. */
async function owner(t, files, transport = {}) {
  const share = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-share-'));
  t.after(() => fs.rmSync(share, { recursive: true, force: true }));
  for (const [rel, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(share, rel)), { recursive: true });
    fs.writeFileSync(path.join(share, rel), bytes);
  }
  const c = await concern(t, 'me', { docs: share }, transport);
  const serve = (p) => {
    const e = makeEnvelope({
      from: from('puller'),
      type: 'command',
      to: 'me',
      payload: { command: 'get-file', args: { share: 'docs', path: p } },
    });
    // As the sidecar hands it over: the path as the bus core read it (answerShareCommand).
    const cmd = bus().parseShareCommand(e.env);
    return c.s.pulls.serve('puller', e.env, { share: 'docs', path: cmd.path });
  };
  const offers = () => c.sent.filter((x) => x.type === 'file_offer').map((x) => x.payload);
  const answer = () => c.sent.filter((x) => x.via === 'respond').at(-1).outcome;
  return { serve, offers, answer, sent: c.sent };
}

test('get-file: the offer names the MIME type and kind its extension gives', async (t) => {
  const o = await owner(t, {
    'shot.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    'notes.md': '# notes\n',
    'data.bin': Buffer.from([1, 2, 3]),
  });
  await o.serve('shot.png');
  await o.serve('notes.md');
  await o.serve('data.bin');
  assert.deepEqual(
    o.offers().map((x) => [x.name, x.mimeType, x.kind]),
    [
      ['shot.png', 'image/png', 'image'],
      ['notes.md', 'text/markdown', 'file'],
      ['data.bin', 'application/octet-stream', 'file'],
    ],
  );
  assert.equal(o.answer().result.mimeType, 'application/octet-stream', 'the answer names it too');
});

test('get-file: over a data channel that takes 65,536 bytes, every chunk envelope fits it', async (t) => {
  // A far end that states no SCTP limit gets 65,536: a 64 KiB chunk (~88 KB of envelope) would be
  // refused there until the pull gave up.
  const big = Buffer.alloc(300_000, 7);
  const o = await owner(t, { 'big.bin': big }, { maxMessageSize: 65_536 });
  await o.serve('big.bin');
  assert.equal(o.answer().error, undefined, `served, not refused: ${o.answer().error}`);
  const chunks = o.sent.filter((x) => x.type === 'file_chunk');
  assert.equal(chunks.length, o.offers()[0].totalChunks);
  assert.ok(chunks.length > 300_000 / 65_536, 'smaller chunks than the default');
  for (const c of chunks) assert.ok(c.bytes <= 65_536, `${c.bytes} bytes`);
});

test('get-file: a\\b.txt is a/b.txt, as list-files reads it', async (t) => {
  const o = await owner(t, { 'a/b.txt': 'bee\n' });
  await o.serve('a\\b.txt');
  assert.equal(o.answer().error, undefined, `served, not refused: ${o.answer().error}`);
  assert.equal(o.answer().result.path, 'a/b.txt');
  assert.equal(o.offers()[0].name, 'b.txt');
  assert.equal(o.offers()[0].mimeType, 'text/plain');
});

test('pull: the offer for "guide.md " or a\\b.txt answers the pull (matched on the path as the owner reads it)', async (t) => {
  for (const [rel, name] of [
    ['guide.md ', 'guide.md'],
    ['a\\b.txt', 'b.txt'],
  ])
    await t.test(JSON.stringify(rel), async (t) => {
      const { s, id, dest, receive } = await asked(t, rel);
      const file = plan(Buffer.from(`the file ${name}\n`), name);
      assert.equal(receive(OWNER, 'file_offer', file.offer), true);
      assert.equal(
        s.pulls.status(id).state,
        'receiving',
        `${JSON.stringify(rel)}: taken by the pull`,
      );
      for (const c of file.chunks) receive(OWNER, 'file_chunk', c);
      receive(OWNER, 'file_complete', file.complete);
      const st = s.pulls.status(id);
      assert.equal(st.state, 'done', st.error);
      assert.deepEqual(fs.readdirSync(dest), [name]);
    });
});

test('pull: a failed pull sends its owner one file_ack {ok: false}; the chunks still coming get no second', async (t) => {
  const { s, id, sent, receive } = await asked(t, 'guide.md');
  const file = plan(Buffer.alloc(3000, 7), 'guide.md');
  assert.equal(file.chunks.length, 3);
  receive(OWNER, 'file_offer', file.offer);
  // The first chunk is cut short: the receiver refuses it and the pull fails.
  receive(OWNER, 'file_chunk', { ...file.chunks[0], data: file.chunks[0].data.slice(0, 8) });
  assert.equal(s.pulls.status(id).state, 'failed');
  receive(OWNER, 'file_chunk', file.chunks[1]);
  receive(OWNER, 'file_chunk', file.chunks[2]);
  receive(OWNER, 'file_complete', file.complete);
  const acks = sent.filter((x) => x.type === 'file_ack');
  assert.equal(acks.length, 1, JSON.stringify(acks));
  assert.equal(acks[0].to, OWNER);
  assert.equal(acks[0].payload.ok, false);
  assert.equal(acks[0].payload.transferId, file.offer.transferId);
  // Only the owner's id is remembered: another peer's chunk under it is refused, as any stray one.
  receive('stranger', 'file_chunk', file.chunks[1]);
  assert.deepEqual(
    sent.filter((x) => x.type === 'file_ack').map((x) => x.to),
    [OWNER, 'stranger'],
  );
});
