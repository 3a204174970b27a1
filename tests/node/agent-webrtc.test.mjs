// `tether agent` over real RTCDataChannels (node-datachannel through web/peer/webrtc-transport.js),
// signaled through a real ws room relay, in a private network namespace with only `lo`
// (TOOLCHAIN.md): directs and a broadcast both ways, then a swarm fetch over the binary lane.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, inPrivateNetns, waitFor } from './lib/agent-harness.mjs';

if (await inPrivateNetns(import.meta.url)) {
  test('two sidecars over WebRTC data channels: send, broadcast, read, swarm fetch', async (t) => {
    const { startRoomServer } = await import('../e2e/lib/room_server.mjs');
    const server = await startRoomServer();
    t.after(() => server.close());
    const h = new Harness(t);
    const A = h.dir('alice');
    const B = h.dir('bob');
    await h.join(A, 'alice', server.url, ['--transport', 'webrtc', '--webrtc-bind', '127.0.0.1']);
    await h.join(B, 'bob', server.url, ['--transport', 'webrtc', '--webrtc-bind', '127.0.0.1']);
    assert.equal((await h.ok(A, ['status'])).transport, 'webrtc');
    await waitFor('data channels open both ways', async () => {
      const [pa, pb] = [(await h.ok(A, ['peers'])).peers, (await h.ok(B, ['peers'])).peers];
      return (
        pa.some((p) => p.id === 'bob' && p.open && p.skills.includes('handoff-v1')) &&
        pb.some((p) => p.id === 'alice' && p.open)
      );
    });
    const s = await h.ok(A, ['send', 'bob', 'over', 'sctp']);
    assert.equal(s.state, 'sent');
    await h.ok(B, ['broadcast', 'hello', 'room']);
    await waitFor('bob has it', async () => (await h.ok(B, ['notify'])).unread === 1);
    await waitFor('alice has it', async () => (await h.ok(A, ['notify'])).unread === 1);
    const rb = (await h.ok(B, ['read'])).messages.map((m) => m.envelope);
    assert.deepEqual(
      [rb[0].id, rb[0].from.streamId, rb[0].payload.text],
      [s.id, 'alice', 'over sctp'],
    );
    assert.equal((await h.ok(A, ['read'])).messages[0].envelope.payload.text, 'hello room');

    const src = path.join(h.dir('src'), 'blob.bin');
    const data = randomBytes(800_000);
    fs.writeFileSync(src, data);
    const offer = await h.ok(A, ['swarm', 'offer', src]);
    assert.equal(offer.fileId, createHash('sha256').update(data).digest('hex'));
    const dest = h.dir('dest');
    await waitFor('bob saw the offer', async () =>
      Object.keys((await h.ok(B, ['swarm', 'list'])).offers).includes(offer.fileId),
    );
    const got = await h.ok(B, ['swarm', 'fetch', offer.fileId, '--to', dest]);
    assert.equal(got.sha256, offer.fileId);
    assert.ok(fs.readFileSync(path.join(dest, 'blob.bin')).equals(data));
    await h.ok(A, ['leave']);
    await h.ok(B, ['leave']);
  });
}
