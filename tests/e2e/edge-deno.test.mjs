// The self-hosted twin (web/host/rooms.js) under real Deno: the same room endpoint and the same
// guarantees as the Worker, over Deno.serve WebSockets and a SQLite file. Restart the process
// mid-stream (SIGKILL, so nothing gets a chance to flush), lose no echoed write, old clients get a
// delta; a storage failure stalls and recovers; tickets and limits answer as at the edge.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CLOSE } from '../../web/edge/limits.js';
import { Peer, startDenoRooms, until, upgradeAnswer } from './lib/edge.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tether-rooms-deno-'));
const db = join(dir, 'rooms.sqlite');
const children = new Set();

const startDeno = () =>
  startDenoRooms({
    dir,
    db,
    children,
    args: ['--checkpoint-every', '8', '--limits', JSON.stringify({ maxFrameBytes: 4096 })],
  });

after(async () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

test(
  'deno twin: converge, SIGKILL mid-stream, no echoed write lost, delta after restart',
  { timeout: 120_000 },
  async () => {
    const room = 'twin';
    let host = await startDeno();
    const a = new Peer(host.wsUrl, room, { writer: 'a' });
    const b = new Peer(host.wsUrl, room, { writer: 'b' });
    await until(() => a.client.welcomed && b.client.welcomed, 'welcomes');
    a.write([{ kind: 'set', path: [], next: { a: {}, b: {} } }]);
    await until(() => a.client.unacked === 0, 'seed');
    const sent = { a: [], b: [] };
    for (let n = 0; n < 30; n++) {
      if (a.write([{ kind: 'set', path: ['a', `v${n}`], next: n }])) sent.a.push(n);
      if (b.write([{ kind: 'set', path: ['b', `v${n}`], next: n }])) sent.b.push(n);
      if (n === 20)
        await until(() => a.client.unacked === 0 && b.client.unacked === 0, 'first writes');
    }
    const echoed = {
      a: sent.a.slice(0, sent.a.length - a.client.unacked),
      b: sent.b.slice(0, sent.b.length - b.client.unacked),
    };
    await host.kill();
    await until(() => a.closed && b.closed, 'sockets dropped');

    host = await startDeno();
    const a2 = new Peer(host.wsUrl, room, { writer: 'a', client: a.client });
    const b2 = new Peer(host.wsUrl, room, { writer: 'b', client: b.client });
    await until(() => a2.welcomes.length && b2.welcomes.length, 'welcomes after restart');
    assert.ok(
      [...a2.welcomes, ...b2.welcomes].every((m) => m === 'delta' || m === 'up-to-date'),
      JSON.stringify([a2.welcomes, b2.welcomes]),
    );
    await until(() => a2.client.unacked === 0 && b2.client.unacked === 0, 'tails echoed');
    // Own tails echoed says nothing about the other writer's last broadcasts reaching `a`: wait
    // (bounded) until all 60 are visible, which fails if any write was lost.
    const keys = () =>
      Object.keys(a2.client.value().a).length + Object.keys(a2.client.value().b).length;
    await until(() => keys() === 60, 'all 60 writes visible to a');
    const v = a2.client.value();
    for (const n of echoed.a) assert.equal(v.a[`v${n}`], n);
    for (const n of echoed.b) assert.equal(v.b[`v${n}`], n);
    assert.equal(Object.keys(v.a).length + Object.keys(v.b).length, 60);
    assert.equal((await host.hook('info', room)).seq, 61);

    // A storage failure stalls the room (1011), healing + recovery re-admits, the resend lands.
    await host.hook('fail-storage', room);
    a2.write([{ kind: 'set', path: ['a', 'late'], next: true }]);
    await until(() => a2.closed && b2.closed, 'stall closes');
    assert.equal(a2.closed.code, CLOSE.STORAGE);
    await host.hook('heal-storage', room);
    const a3 = await until(async () => {
      const p = new Peer(host.wsUrl, room, { writer: 'a', client: a.client });
      await until(() => p.closed || p.client.welcomed, 'admission');
      return p.client.welcomed ? p : null;
    }, 'readmission');
    await until(
      () => a3.client.unacked === 0 && a3.client.value().a.late === true,
      'resend echoed',
    );
    assert.equal((await host.hook('info', room)).seq, 62);

    // Tickets and limits answer as at the edge.
    const res = await upgradeAnswer(`${host.url}/rooms/${room}?ticket=t1.bad.bad`);
    assert.equal(res.status, 401);
    assert.match(res.body, /^malformed: /);
    const big = new Peer(host.wsUrl, room, { writer: 'big' });
    await until(() => big.client.welcomed, 'welcome');
    big.send('y'.repeat(5000));
    await until(() => big.closed, 'oversize');
    assert.equal(big.closed.code, CLOSE.TOO_BIG);
    a3.write([{ kind: 'set', path: ['a', 'after-big'], next: 1 }]);
    await until(() => a3.client.unacked === 0, 'room serves on');
    await a3.close();
    await host.kill();
  },
);
