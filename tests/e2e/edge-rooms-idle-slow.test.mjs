// Two rules of the room endpoint, run the same way on both hosts: the Worker's Durable Object
// under real workerd (Miniflare) and the self-hosted twin under real Deno.
// - Idle rooms unload: once a room's last socket is gone its state leaves memory (the store holds
//   it) and the next connection loads it back, so memory is bounded by active rooms.
// - The slow-reader rule (docs/rooms.md § Limits): a reader that stops reading loses presence
//   updates first and is closed with 4010 before its queue passes maxBufferedBytes; the other
//   members keep their echoes. These readers acknowledge what they read (tether's room client),
//   which bounds their queue on both hosts; Deno also measures it (bufferedAmount). What the
//   stopped reader was sent stays within the pace model too (readerBytesPerSecond), which is what
//   holds a reader that never acknowledges on workerd. edge-rooms-slow-reader.test.mjs measures
//   the acknowledged bound and the host's memory.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLOSE } from '../../web/edge/limits.js';
import { Peer, startDenoRooms, startEdge, until } from './lib/edge.mjs';

const LIMITS = { maxBufferedBytes: 1 << 20, readerBytesPerSecond: 1024 };
const PRESENCE_BYTES = 100_000;
// 18 MB offered to every reader: past the loopback kernel buffers (Deno's bufferedAmount only
// grows once they are full) and eighteen times the bound.
const PRESENCE_FRAMES = 180;

const dir = mkdtempSync(join(tmpdir(), 'tether-rooms-idle-'));
const children = new Set();
after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const hosts = {
  workerd: () => startEdge({ bindings: { ROOM_LIMITS: JSON.stringify(LIMITS) } }),
  deno: () =>
    startDenoRooms({
      dir,
      db: join(dir, 'rooms.sqlite'),
      children,
      args: ['--limits', JSON.stringify(LIMITS)],
    }),
};

for (const [name, start] of Object.entries(hosts)) {
  describe(`rooms on ${name}`, () => {
    let host;
    before(async () => {
      host = await start();
    });
    after(async () => {
      await (host?.stop ?? host?.kill)?.call(host);
    });

    test(
      `${name}: an idle room unloads and loads back from storage`,
      { timeout: 60_000 },
      async () => {
        const room = `idle-${name}`;
        const a = new Peer(host.wsUrl, room, { writer: 'a' });
        const b = new Peer(host.wsUrl, room, { writer: 'b' });
        await until(() => a.client.welcomed && b.client.welcomed, 'welcomes');
        a.write([{ kind: 'set', path: [], next: { n: 0 } }]);
        for (let n = 1; n <= 10; n++) b.write([{ kind: 'set', path: ['n'], next: n }]);
        await until(() => a.client.unacked === 0 && b.client.unacked === 0, 'echoes');
        const loaded = await host.hook('rooms', room);
        assert.deepEqual(loaded.loaded, [room]);
        await a.close();
        assert.deepEqual((await host.hook('rooms', room)).loaded, [room]); // b is still in it
        await b.close();
        const idle = await until(async () => {
          const r = await host.hook('rooms', room);
          return r.loaded.length === 0 ? r : null;
        }, 'the idle room unloads');
        assert.equal(idle.relay.rooms, 0);
        assert.equal((await host.hook('info', room)).seq, undefined); // the relay holds no such room
        // Back from storage: an old client catches up with a delta, a new one gets the snapshot.
        const a2 = new Peer(host.wsUrl, room, { writer: 'a', client: a.client });
        const c = new Peer(host.wsUrl, room, { writer: 'c' });
        await until(() => a2.welcomes.length && c.client.welcomed, 'welcomes after unload');
        assert.deepEqual(a2.welcomes, ['up-to-date']);
        assert.deepEqual(c.client.value(), { n: 10 });
        assert.equal((await host.hook('info', room)).seq, 11);
        c.write([{ kind: 'set', path: ['n'], next: 11 }]);
        await until(() => a2.client.value().n === 11, 'the reloaded room serves writes');
        await a2.close();
        await c.close();
      },
    );

    test(
      `${name}: a reader that stops reading loses presence first, then 4010; others keep their echoes`,
      { timeout: 90_000 },
      async () => {
        const room = `slow-${name}`;
        const flood = new Peer(host.wsUrl, room, { writer: 'flood' });
        const by = new Peer(host.wsUrl, room, { writer: 'by' });
        const slow = new Peer(host.wsUrl, room, { writer: 'slow' });
        await until(
          () => flood.client.welcomed && by.client.welcomed && slow.client.welcomed,
          'welcomes',
        );
        let slowBytes = 0;
        slow.ws.on('message', (d) => (slowBytes += d.length));
        const before = slowBytes;
        slow.ws._socket.pause(); // stops reading: the kernel buffers fill, then the host's queue
        const started = Date.now();
        const data = 'p'.repeat(PRESENCE_BYTES);
        for (let i = 0; i < PRESENCE_FRAMES; i++)
          flood.send(JSON.stringify({ t: 'presence', room, data: { i, data } }));
        // Its echo comes back once the host has handled (sent or dropped) every frame before it.
        flood.write([{ kind: 'set', path: ['flooded'], next: true }]);
        // The bystander reads: it keeps writing and every echo comes back.
        for (let n = 0; n < 5; n++) by.write([{ kind: 'set', path: ['by', String(n)], next: n }]);
        await until(
          () => by.client.unacked === 0 || by.closed,
          'the bystander keeps its echoes',
          1200,
        );
        assert.equal(by.closed, null, `the bystander was closed: ${JSON.stringify(by.closed)}`);
        await until(() => flood.client.unacked === 0, 'the flood is handled', 1200);
        assert.equal(flood.closed, null);
        const elapsed = Date.now() - started;

        // The stopped reader was closed with 4010, or lost only presence: every echo reaches it.
        // It only reads from here: a write after the host's close (an acknowledgement of what
        // came before it) meets a socket Deno has shut, whose reset discards the close unread.
        slow.send = () => {};
        slow.ws._socket.resume();
        await until(
          () =>
            slow.closed ||
            (Object.keys(slow.client.value().by ?? {}).length === 5 &&
              slow.client.value().flooded === true),
          'the slow reader catches up or is closed',
          1200,
        );
        if (slow.closed) assert.equal(slow.closed.code, CLOSE.SLOW_READER);
        const sent = slowBytes - before;
        if (name === 'workerd') {
          // No bufferedAmount: what the host sent the stopped reader is what it queued, and the
          // model bounds it (the bound plus the assumed drain over the time it was sent in).
          const bound =
            LIMITS.maxBufferedBytes + (LIMITS.readerBytesPerSecond * (elapsed + 1000)) / 1000;
          assert.ok(sent <= bound, `the stopped reader was sent ${sent} bytes, over ${bound}`);
        } else {
          // Deno measures the queue. A frame that carries the room and would pass the bound
          // closes the stopped reader with 4010 while the reading bystander keeps its echoes.
          const slow2 = new Peer(host.wsUrl, room, { writer: 'slow2' });
          const flood2 = new Peer(host.wsUrl, room, { writer: 'flood2' }); // a fresh rate budget
          await until(() => slow2.client.welcomed && flood2.client.welcomed, 'welcome');
          slow2.ws._socket.pause();
          const dropped = (await host.hook('rooms', room)).droppedEphemeral;
          for (let i = 0; i < PRESENCE_FRAMES; i++)
            flood2.send(JSON.stringify({ t: 'presence', room, data: { i, data } }));
          // The bystander's echo comes after everything sent to it before: it has read the flood.
          by.write([{ kind: 'set', path: ['mark'], next: 1 }]);
          await until(() => by.client.unacked === 0, 'the bystander reads the flood', 1200);
          await until(
            async () => (await host.hook('rooms', room)).droppedEphemeral > dropped,
            'presence dropped for the stopped reader',
          );
          // 600 KB of echoes: within the bound for a reader that reads, past it for one whose
          // queue presence already filled to half.
          for (let n = 0; n < 6; n++)
            by.write([{ kind: 'set', path: ['big', String(n)], next: data }]);
          await until(
            () => by.client.unacked === 0 || by.closed,
            'the bystander keeps its echoes',
            1200,
          );
          assert.equal(by.closed, null, `the bystander was closed: ${JSON.stringify(by.closed)}`);
          slow2.send = () => {};
          slow2.ws._socket.resume();
          await until(() => slow2.closed, 'the stopped reader is closed', 1200);
          assert.equal(slow2.closed.code, CLOSE.SLOW_READER);
          assert.equal(by.closed, null);
          await flood2.close();
        }
        assert.ok((await host.hook('rooms', room)).droppedEphemeral > 0, 'presence was dropped');
        await by.close();
        await flood.close();
        if (!slow.closed) await slow.close();
      },
    );
  });
}
