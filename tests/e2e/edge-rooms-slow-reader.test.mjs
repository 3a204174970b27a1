// The edge's slow-reader rule over read acknowledgements (docs/rooms.md § The slow-reader rule),
// run the same way on both hosts: the Worker's Durable Object under real workerd (Miniflare),
// which has no bufferedAmount and does not bound a socket's queue itself, and the self-hosted
// twin under real Deno, which reports bufferedAmount. Both run with the defaults' requireReadAck
// (on): every reader is held to what it acknowledged.
//
// A member whose socket stops reading (its TCP receive side paused, so the kernel buffers fill
// and then the host's queue) while another floods presence and a third keeps writing:
// - the stopped reader loses presence first and is closed with 4010 once the echoes would pass
//   the bound, and what it is handed after it stopped never passes maxBufferedBytes (it
//   acknowledges what it reads, so the host counts everything it has not read: its own queue,
//   the kernel's buffers and the wire);
// - a reader that never acknowledges (a raw WebSocket that sends its hello and never `read`, as a
//   mesh-protocol client) is closed 4010 the same way on both hosts, having been handed at most
//   maxBufferedBytes in all;
// - the host's memory stays flat: its resident size, sampled through the flood, grows by far less
//   than the flood (the pace model alone, at the generous readerBytesPerSecond set here, would
//   have queued all of it inside workerd);
// - the bystander keeps every echo.
// On workerd, a second case rebuilds the object's memory as a hibernation does (the test hook the
// durability tests use) and checks that the surviving sockets are still held to their
// acknowledgements: the readers' marks still match (they keep reading past the bound), and the
// one that stops reading after the wake-up is closed within the bound.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { helloText } from '../../web/glue/relay.js';
import { CLOSE, DEFAULT_LIMITS } from '../../web/edge/limits.js';
import { rssMiB, workerdPid } from './lib/cockpit_clients.mjs';
import { Peer, startDenoRooms, startEdge, ticketFor, until } from './lib/edge.mjs';

const MAX_BUFFERED = 1 << 20;
const LIMITS = {
  maxBufferedBytes: MAX_BUFFERED,
  // A pace model this generous bounds nothing: what holds the queue here is the acknowledgements.
  readerBytesPerSecond: 256 * MAX_BUFFERED,
  // The flood stays within every rate: this test is about the queue, not the rates.
  connectionMessagesPerSecond: 2000,
  connectionBurst: 2000,
  principalMessagesPerSecond: 2000,
  principalBurst: 2000,
};
const PRESENCE_BYTES = 100_000;
// 150 MB offered to every reader: 150 times the bound, far past the loopback kernel buffers.
const PRESENCE_FRAMES = 1500;
// The host's resident size may grow by at most this through the flood: a bound of one MiB for
// the stopped reader, and the garbage of a flood handled at full speed (some 20 to 30 MiB seen on
// either host, whatever the flood's length); queuing the flood would take 150.
const RSS_GROWTH_MIB = 48 * (MAX_BUFFERED / (1 << 20));

const dir = mkdtempSync(join(tmpdir(), 'tether-rooms-slow-'));
const children = new Set();
after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const hosts = {
  workerd: async () => {
    const e = await startEdge({ bindings: { ROOM_LIMITS: JSON.stringify(LIMITS) } });
    return { ...e, pid: workerdPid() };
  },
  deno: async () => {
    const d = await startDenoRooms({
      dir,
      db: join(dir, 'rooms.sqlite'),
      children,
      args: ['--limits', JSON.stringify(LIMITS)],
    });
    return { ...d, pid: d.child.pid, stop: () => d.kill() };
  },
};

// A reader that never acknowledges: the hello and nothing else, as a mesh-protocol client.
async function silentReader(wsUrl, room, writer) {
  const ticket = await ticketFor(room, writer);
  const ws = new WebSocket(
    `${wsUrl}/rooms/${encodeURIComponent(room)}?ticket=${encodeURIComponent(ticket)}`,
  );
  const r = { ws, bytes: 0, welcomed: false, closed: null };
  ws.on('error', () => {});
  ws.on('message', (d) => {
    r.bytes += d.length;
    if (String(d).startsWith('{"t":"welcome"')) r.welcomed = true;
  });
  ws.on('close', (code) => (r.closed ??= { code }));
  await new Promise((resolve) => ws.once('open', resolve));
  ws.send(helloText({ room, origin: writer, policyVersion: 1 }));
  return r;
}

for (const [name, start] of Object.entries(hosts)) {
  describe(`rooms on ${name}: the slow-reader rule`, () => {
    let host;
    before(async () => {
      host = await start();
      assert.ok(host.pid > 0, `the ${name} process is found`);
    });
    after(async () => {
      await host?.stop?.();
    });

    test(
      `${name}: a reader that stops reading is closed 4010 within the bound; memory stays flat; others keep their echoes`,
      { timeout: 180_000 },
      async (t) => {
        const room = `slow-ack-${name}`;
        const flood = new Peer(host.wsUrl, room, { writer: 'flood' });
        const by = new Peer(host.wsUrl, room, { writer: 'by' });
        const slow = new Peer(host.wsUrl, room, { writer: 'slow' });
        const silent = await silentReader(host.wsUrl, room, 'silent');
        assert.equal(DEFAULT_LIMITS.requireReadAck, true, 'acknowledgements are required');
        await until(
          () =>
            flood.client.welcomed && by.client.welcomed && slow.client.welcomed && silent.welcomed,
          'welcomes',
        );
        let slowBytes = 0;
        slow.ws.on('message', (d) => (slowBytes += d.length));
        const rss0 = rssMiB(host.pid);
        // Stops reading: the kernel buffers fill, then the host's queue.
        slow.ws._socket.pause();
        silent.ws._socket.pause();
        const readBefore = slowBytes;
        let rssPeak = rss0;
        const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(host.pid))), 50);
        try {
          // Incompressible: both hosts and `ws` speak permessage-deflate, which would otherwise
          // queue a flood of one repeated letter in a few bytes a frame.
          const data = randomBytes((PRESENCE_BYTES * 3) / 4).toString('base64');
          for (let i = 0; i < PRESENCE_FRAMES; i++) {
            flood.send(JSON.stringify({ t: 'presence', room, data: { i, data } }));
            // Lets the sampler and the sockets run: the flood is sent, not buffered in this process.
            if (i % 50 === 49) await new Promise((r) => setTimeout(r, 10));
          }
          // Its echo comes back once the host has handled (sent or dropped) every frame before it.
          flood.write([{ kind: 'set', path: ['flooded'], next: true }]);
          await until(() => flood.client.unacked === 0, 'the flood is handled', 2400);
          assert.equal(
            flood.closed,
            null,
            `the flooder was closed: ${JSON.stringify(flood.closed)}`,
          );
          // 600 KB of echoes: within the bound for a reader that reads, past it for one whose
          // queue presence already filled to half.
          for (let n = 0; n < 6; n++)
            by.write([{ kind: 'set', path: ['big', String(n)], next: data }]);
          await until(
            () => by.client.unacked === 0 || by.closed,
            'the bystander keeps its echoes',
            2400,
          );
          assert.equal(by.closed, null, `the bystander was closed: ${JSON.stringify(by.closed)}`);
        } finally {
          clearInterval(sampler);
        }
        const dropped = (await host.hook('rooms', room)).droppedEphemeral;
        assert.ok(dropped > 0, 'presence was dropped for the stopped reader');

        // What the host sent is what it sent: the reader now only reads it. (Its acknowledgements
        // after the close would meet a socket Deno has already shut, whose reset discards the
        // close frame unread: the client would see 1006 instead of the 4010 it was sent.)
        slow.send = () => {};
        slow.ws._socket.resume();
        silent.ws._socket.resume();
        await until(() => slow.closed, 'the stopped reader is closed', 2400);
        assert.equal(slow.closed.code, CLOSE.SLOW_READER, JSON.stringify(slow.closed));
        const handed = slowBytes - readBefore;
        t.diagnostic(
          `${name}: handed ${handed} bytes after it stopped; resident size ${rss0.toFixed(1)} MiB, peak +${(rssPeak - rss0).toFixed(1)} MiB through the flood`,
        );
        assert.ok(
          handed <= MAX_BUFFERED,
          `the stopped reader was handed ${handed} bytes after it stopped, over the bound ${MAX_BUFFERED}`,
        );
        assert.ok(
          rssPeak - rss0 <= RSS_GROWTH_MIB,
          `${name}'s resident size grew ${(rssPeak - rss0).toFixed(1)} MiB (from ${rss0.toFixed(1)}), over ${RSS_GROWTH_MIB} MiB`,
        );
        // The reader that never acknowledges: held to everything it was handed, on workerd as on
        // Deno, where neither bufferedAmount nor a pace model would have closed it by now.
        await until(() => silent.closed, 'the silent reader is closed', 2400);
        assert.equal(silent.closed.code, CLOSE.SLOW_READER, JSON.stringify(silent.closed));
        t.diagnostic(`${name}: the silent reader was handed ${silent.bytes} bytes in all`);
        assert.ok(
          silent.bytes <= MAX_BUFFERED,
          `the silent reader was handed ${silent.bytes} bytes, over the bound ${MAX_BUFFERED}`,
        );
        // The bystander still writes and reads its echoes after all of it.
        by.write([{ kind: 'set', path: ['after'], next: 1 }]);
        await until(() => by.client.unacked === 0, 'the bystander after the close', 1200);
        assert.equal(by.closed, null);
        await by.close();
        await flood.close();
      },
    );

    if (name === 'workerd')
      test(
        'workerd: after a wake-up the surviving sockets are still held to their acknowledgements',
        { timeout: 120_000 },
        async (t) => {
          const room = 'slow-ack-wake';
          const w = new Peer(host.wsUrl, room, { writer: 'w' });
          const by = new Peer(host.wsUrl, room, { writer: 'by' });
          const slow = new Peer(host.wsUrl, room, { writer: 'slow' });
          const peers = [w, by, slow];
          const acked = new Map(peers.map((p) => [p, 0]));
          for (const p of peers) {
            const send = p.send.bind(p);
            p.send = (text) => {
              if (text.startsWith('{"t":"read"')) acked.set(p, JSON.parse(text).bytes);
              send(text);
            };
          }
          await until(() => peers.every((p) => p.client.welcomed), 'welcomes');
          w.write([{ kind: 'set', path: [], next: { big: {} } }]);
          const data = randomBytes(75_000).toString('base64'); // 100 KB, incompressible
          let n = 0;
          const writeBig = async (count) => {
            for (let i = 0; i < count; i++) {
              w.write([{ kind: 'set', path: ['big', String(n++)], next: data }]);
              await until(() => w.client.unacked === 0 || w.closed, 'the echo', 1200);
              assert.equal(w.closed, null, `the writer was closed: ${JSON.stringify(w.closed)}`);
            }
          };
          // Past the first marks (every quarter of the bound) before the wake-up: every reader
          // has acknowledged something, so its count and the object's must agree after it.
          await writeBig(4);
          await until(() => peers.every((p) => acked.get(p) > 0), 'acknowledgements');
          const before = await host.hook('info', room);
          const woke = await host.hook('evict', room);
          assert.equal(woke.sockets, 3, 'every socket survived the wake-up');
          const after = await host.hook('info', room);
          assert.equal(after.wakes, before.wakes + 1);

          // Readers that read go on past the bound after the wake-up: only acknowledgements
          // credited against the woken object's count keep them open.
          let slowBytes = 0;
          slow.ws.on('message', (d) => (slowBytes += d.length));
          slow.ws._socket.pause();
          const readBefore = slowBytes;
          await writeBig(24); // 2.4 MB to every reader, more than twice the bound
          assert.equal(by.closed, null, `the bystander was closed: ${JSON.stringify(by.closed)}`);
          await until(() => by.client.value()?.big?.[String(n - 1)] === data, 'the echoes', 1200);
          for (let i = 0; i < n; i++) assert.equal(by.client.value().big[String(i)], data);

          slow.send = () => {};
          slow.ws._socket.resume();
          await until(() => slow.closed, 'the stopped reader is closed', 2400);
          assert.equal(slow.closed.code, CLOSE.SLOW_READER, JSON.stringify(slow.closed));
          const handed = slowBytes - readBefore;
          t.diagnostic(`workerd after a wake-up: handed ${handed} bytes after it stopped`);
          assert.ok(
            handed <= MAX_BUFFERED,
            `the stopped reader was handed ${handed} bytes after it stopped, over the bound ${MAX_BUFFERED}`,
          );
          await by.close();
          await w.close();
        },
      );
  });
}
