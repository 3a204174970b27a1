// The cockpit relay's WebSocket lane, proven as WebTransport is, on both hosts: the Deno relay
// (web/host/relay.js, where sockets report bufferedAmount) and the edge Worker's cockpit Durable
// Object under real workerd (web/edge/cockpit.js, where they do not, and the core paces them by
// acknowledged pongs: docs/cockpit-protocol.md § The slow-reader rule on a WebSocket).
// The robot SDK and the viewer client run in this process over real `ws` sockets; a slow reader is
// a viewer whose socket stopped reading, so its kernel buffers fill and TCP's window closes.
//   - latest: a reader that stops reading costs the host a bounded queue (the newest pending frame
//     supersedes the rest; the backlog it reads on resuming is all the host held for it) and the
//     other viewer keeps receiving;
//   - reliable: a reader that stops reading is disconnected once its queue overflows, and the other
//     viewer loses nothing;
//   - publishing: pub_ack and pub_nack over the lane;
//   - liveness: a dead socket (nothing more heard from it) is closed and its lease released.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  infoOf,
  nodeRobot,
  nodeViewer,
  rssMiB,
  until,
  wire,
  workerdPid,
} from './lib/cockpit_clients.mjs';
import { killAll, startRelay } from './lib/cockpit_procs.mjs';
import { startEdge } from './lib/edge.mjs';

const manifest = {
  version: 1,
  channels: [
    { ch: 'cam', encoding: 'jpeg.v1', delivery: 'latest' },
    { ch: 'log', encoding: 'json.v1', delivery: 'reliable' },
    { ch: 'say', dir: 'tx', encoding: 'text.json.v1', delivery: 'reliable', publish: true },
    { ch: 'arm', dir: 'tx', encoding: 'json.v1', publish: true, requiredScope: 'arm' },
    { ch: 'cmd_vel', dir: 'tx', encoding: 'twist.json.v1' },
  ],
  panels: [{ id: 'drive', kind: 'teleop', channels: ['cmd_vel'] }],
};

const CAM_BYTES = 256 * 1024;
const LOG_BYTES = 128 * 1024;
const pad = (n, bytes) => {
  const b = new Uint8Array(bytes);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
};

const hosts = {
  deno: async () => {
    const r = await startRelay();
    return { http: r.http, pid: r.pid, stop: async () => {} };
  },
  edge: async () => {
    const e = await startEdge();
    return { http: e.url, pid: workerdPid(), stop: () => e.stop() };
  },
};

after(() => killAll());

for (const [name, start] of Object.entries(hosts)) {
  describe(`${name}: the WebSocket lane`, { timeout: 180_000 }, () => {
    let host;
    let robot;
    let info;
    const viewers = [];
    const viewer = (opts) => {
      const v = nodeViewer(info, opts);
      viewers.push(v);
      return v;
    };
    const watching = async (v, chs = []) => {
      v.viewer.watch('r1');
      v.viewer.want(chs);
      await until(() => v.manifests.some((m) => m.manifest), 'the manifest');
      await until(() => chs.every((ch) => robot.robot.wants(ch)), `the robot asked for ${chs}`);
    };

    before(async () => {
      host = await start();
      assert.ok(host.pid, 'the host process is known');
      robot = await nodeRobot(host.http, { id: 'r1', name: 'Rover', model: 'sim', manifest });
      await until(() => robot.welcomes() === 1, 'the robot welcomed');
      info = await infoOf(host.http);
    });
    after(async () => {
      for (const v of viewers) v.close();
      await robot?.robot.stop();
      await host?.stop();
    });

    test('latest: what a stopped reader costs the host is bounded; the other keeps receiving', async (t) => {
      const fast = viewer();
      const slow = viewer();
      await watching(fast, ['cam']);
      await watching(slow, ['cam']);
      const cam = robot.stream('cam', (n) => pad(n, CAM_BYTES), 40);
      await until(() => (slow.frames.cam?.length ?? 0) >= 3, 'the slow viewer reading at first');
      slow.pause();
      const pausedAt = slow.frames.cam.length;
      const sentAtPause = cam.sent();
      const rss = [rssMiB(host.pid)];
      // 7 s at 6.4 MB/s: some 45 MB the slow viewer cannot take, inside its liveness bound.
      const end = Date.now() + 7000;
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, 250));
        rss.push(rssMiB(host.pid));
      }
      cam.stop();
      const produced = (cam.sent() - sentAtPause) * CAM_BYTES;
      // Whatever the host queued for the stopped reader (its own buffers, then the kernel's) is
      // delivered once it reads again: that backlog is the memory the reader cost.
      slow.resume();
      const last = cam.lastSeq();
      await until(() => slow.frames.cam.at(-1).seq === last, 'the slow viewer at the newest frame');
      await new Promise((r) => setTimeout(r, 500));
      const backlog = slow.frames.cam.slice(pausedAt).reduce((n, f) => n + f.bytes, 0);
      const stats = await (await fetch(`${host.http}/api/stats`)).json();
      const counters = stats.robots.find((r) => r.id === 'r1').channels.cam;
      const mib = (n) => (n / 2 ** 20).toFixed(1);
      const diag = `produced ${mib(produced)} MiB, backlog ${mib(backlog)} MiB, host RSS ${rss[0].toFixed(0)}..${Math.max(...rss).toFixed(0)} MiB, ${JSON.stringify(counters)}`;
      t.diagnostic(diag);
      assert.ok(counters.dropped > 0, `superseded for the stopped reader: ${diag}`);
      // The host's own bound (1 MiB of bufferedAmount on Deno, the 4 MiB acknowledged window at
      // the edge) plus the frames in flight and loopback's kernel buffers.
      assert.ok(
        backlog < 20 * 2 ** 20 && backlog < produced / 2,
        `the stopped reader's queue stayed bounded: ${diag}`,
      );
      // The other viewer kept receiving: it reached the newest frame, and got nearly every frame
      // sent while the slow one was stopped (every one on a quiet machine; under heavy load its
      // own reads may fall behind, and then latest rightly supersedes for it too).
      const seqs = fast.frames.cam.map((f) => f.seq);
      const during = seqs.filter((s) => s > sentAtPause && s <= last).length;
      const gaps = seqs.filter((s, i) => i > 0 && s !== seqs[i - 1] + 1).length;
      t.diagnostic(`fast viewer: ${during} of ${last - sentAtPause} frames, ${gaps} gaps`);
      await until(() => fast.frames.cam.at(-1).seq === last, 'the fast viewer at the newest frame');
      assert.ok(
        during * 4 >= (last - sentAtPause) * 3,
        `the fast viewer kept receiving: ${during} of ${last - sentAtPause}; ${diag}`,
      );
    });

    test('latest: a stopped reader that keeps pinging gets no more room', async (t) => {
      const slow = viewer();
      await watching(slow, ['cam']);
      const cam = robot.stream('cam', (n) => pad(n, CAM_BYTES), 40);
      await until(() => (slow.frames.cam?.length ?? 0) >= 3, 'the viewer reading at first');
      slow.pause();
      const pausedAt = slow.frames.cam.length;
      const sentAtPause = cam.sent();
      // Pings on a timer while nothing is read, as a client that pings without reading sends
      // them: no `read` at all, as a client older than the read count does.
      let n = 1e6;
      const pinger = setInterval(() => {
        n++;
        const text = new TextEncoder().encode(JSON.stringify({ t: 'ping', n, ts: n }));
        const f = wire.encodeDataFrame(
          { ch: '@control', seq: n, ts: 0, delivery: 'reliable' },
          text,
        );
        slow.socket().send(f.bytes);
      }, 100);
      // 40 MiB the reader cannot take: its pings keep it alive, so only the window holds it.
      await until(
        () => (cam.sent() - sentAtPause) * CAM_BYTES >= 40 * 2 ** 20,
        '40 MiB produced',
        90_000,
      );
      clearInterval(pinger);
      cam.stop();
      const produced = (cam.sent() - sentAtPause) * CAM_BYTES;
      slow.resume();
      const last = cam.lastSeq();
      await until(() => slow.frames.cam.at(-1).seq === last, 'the viewer at the newest frame');
      await new Promise((r) => setTimeout(r, 500));
      const backlog = slow.frames.cam.slice(pausedAt).reduce((k, f) => k + f.bytes, 0);
      const mib = (k) => (k / 2 ** 20).toFixed(1);
      const diag = `produced ${mib(produced)} MiB, backlog ${mib(backlog)} MiB`;
      t.diagnostic(diag);
      assert.ok(
        backlog < 20 * 2 ** 20 && backlog < produced / 2,
        `the pinging reader's queue stayed bounded: ${diag}`,
      );
    });

    test('reliable: a reader that stops reading is disconnected; the other loses nothing', async () => {
      const fast = viewer();
      const slow = viewer();
      await watching(fast, ['log']);
      await watching(slow, ['log']);
      const log = robot.stream('log', (n) => pad(n, LOG_BYTES), 20);
      await until(() => (slow.frames.log?.length ?? 0) >= 3, 'the slow viewer reading at first');
      const stats = async () => (await fetch(`${host.http}/api/stats`)).json();
      const viewersBefore = (await stats()).viewers;
      const closed = new Promise((r) => slow.socket().once('close', (code, why) => r(String(why))));
      slow.pause();
      // The relay's close waits behind what the paused socket cannot take: its own session count
      // shows it first, then the resumed socket reads the close and its reason.
      await until(
        async () => (await stats()).viewers < viewersBefore,
        'the slow viewer dropped',
        30_000,
      );
      slow.resume();
      const reason = await closed;
      log.stop();
      assert.match(reason, /reliable queue overflow/);
      const seqs = fast.frames.log.map((f) => f.seq);
      assert.deepEqual(
        seqs.filter((s, i) => i > 0 && s !== seqs[i - 1] + 1),
        [],
        'the other viewer got every reliable frame, in order',
      );
    });

    test('publishing: pub_ack from the robot, pub_nack for a scoped channel', async () => {
      const v = viewer();
      await watching(v);
      assert.equal(v.publish('say', { text: 'hello' }, 'p1'), 'sent');
      assert.equal(v.publish('arm', { up: 1 }, 'p2'), 'sent');
      await until(() => v.answer('p1') && v.answer('p2'), 'both answers');
      assert.deepEqual(v.answer('p1'), { kind: 'message', t: 'pub_ack', ch: 'say', id: 'p1' });
      assert.equal(v.answer('p2').t, 'pub_nack');
      assert.equal(v.answer('p2').code, 'not_publishable');
      assert.match(v.answer('p2').message, /scope arm/);
    });

    test('liveness: a dead socket is closed and its teleop lease released', async () => {
      const holder = viewer();
      const other = viewer();
      await watching(holder);
      await watching(other);
      holder.viewer.teleopStart();
      await until(() => holder.state.teleop === 'held', 'the lease');
      other.viewer.teleopStart();
      await until(() => other.state.teleop === 'refused', 'teleop_held for the other');
      const events = robot.events.length;
      // The holder's page freezes: it reads nothing more, so it sends no ping (each waits for a
      // pong), and nothing else.
      holder.pause();
      await until(
        () =>
          robot.events.slice(events).some((e) => e.kind === 'command' && e.cause === 'teleop_stop'),
        'the lease released robot-ward',
        30_000,
      );
      other.viewer.teleopStart();
      await until(() => other.state.teleop === 'held', 'the lease for the other viewer');
      holder.resume();
    });
  });
}
