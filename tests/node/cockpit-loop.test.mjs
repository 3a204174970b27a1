// The whole cockpit loop in one process, every part real except the sockets: the relay core run by
// the driver behind the shared WebSocket lane (web/glue/cockpit-ws-lane.js), the robot SDK
// (web/glue/cockpit-robot.js) and the viewer client (web/glue/cockpit-viewer.js), all on the WASM
// build, over in-memory WebSockets and one manual clock. Nothing here sleeps: time moves only when
// the test moves it, so every deadline (twist resends, the robot's watchdog) is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTetherModule } from '../../web/glue/load.js';
import { createWire } from '../../web/glue/wire.js';
import { createCockpitRelay } from '../../web/glue/cockpit-relay.js';
import { createWsLane } from '../../web/glue/cockpit-ws-lane.js';
import { createDriver } from '../../web/glue/driver.js';
import { connectRobot } from '../../web/glue/cockpit-robot.js';
import { connectViewer } from '../../web/glue/cockpit-viewer.js';

const mod = await loadTetherModule();
const wire = createWire(mod);
const enc = new TextEncoder();
const dec = new TextDecoder();

// One clock for every driver: timers fire only in advance().
function manualClock() {
  let t = 1_000_000;
  let next = 1;
  const timers = new Map();
  return {
    now: () => t,
    setTimer: (fn, ms) => {
      const id = next++;
      timers.set(id, { fn, at: t + Math.max(0, ms) });
      return id;
    },
    clearTimer: (id) => timers.delete(id),
    async advance(ms) {
      const end = t + ms;
      for (;;) {
        await settle();
        const due = [...timers.entries()]
          .filter(([, x]) => x.at <= end)
          .sort((a, b) => a[1].at - b[1].at);
        if (!due.length) break;
        const [id, { fn, at }] = due[0];
        timers.delete(id);
        t = Math.max(t, at);
        fn();
      }
      t = end;
      await settle();
    },
  };
}

// Lets every queued delivery run (the in-memory sockets deliver on microtasks).
async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

// A WebSocket whose server end is the relay's lane. `paused` drops what the client sends.
function socketClass(lane) {
  return class MemorySocket {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.binaryType = 'blob';
      this.listeners = new Map();
      this.paused = false;
      MemorySocket.last = this;
      const role = url.endsWith('/ws/robot') ? 'robot' : 'viewer';
      this.server = {
        readyState: 1,
        bufferedAmount: 0,
        send: (bytes) => {
          const copy = Uint8Array.from(bytes);
          queueMicrotask(
            () => this.readyState === 1 && this.emit('message', { data: copy.buffer }),
          );
        },
        close: (code, reason) => this.shut(code, reason),
      };
      queueMicrotask(() => {
        this.handlers = lane.accept(this.server, role);
        if (!this.handlers) return;
        this.readyState = 1;
        this.emit('open', {});
      });
    }
    addEventListener(type, fn) {
      if (!this.listeners.has(type)) this.listeners.set(type, []);
      this.listeners.get(type).push(fn);
    }
    emit(type, event) {
      this[`on${type}`]?.(event);
      for (const fn of this.listeners.get(type) ?? []) fn(event);
    }
    send(bytes) {
      if (this.readyState !== 1) throw new Error('closed');
      if (this.closing) return;
      if (this.paused) return;
      const copy = Uint8Array.from(bytes);
      queueMicrotask(() => this.handlers?.message(copy.buffer));
    }
    close(code = 1000, reason = '') {
      this.shut(code, reason);
    }
    // As a real socket, what the server sent before it closed still arrives first.
    shut(code, reason) {
      if (this.closing) return;
      this.closing = true;
      this.server.readyState = 3;
      queueMicrotask(() => {
        this.readyState = 3;
        this.handlers?.closed();
        this.emit('close', { code, reason });
      });
    }
  };
}

const manifest = {
  version: 1,
  channels: [
    { ch: 'cam', encoding: 'jpeg.v1', delivery: 'latest' },
    { ch: 'say', dir: 'tx', encoding: 'text.json.v1', delivery: 'reliable', publish: true },
    { ch: 'cmd_vel', dir: 'tx', encoding: 'twist.json.v1' },
  ],
  panels: [{ id: 'drive', kind: 'teleop', channels: ['cmd_vel'] }],
};

// `viewers`: how many viewers connect (the first is `viewer`, all are in `viewers`). Every
// completion the lane reports to the core is logged in `completions` as [call, stream, count].
async function loop({ authText = '', robotToken, viewerToken, viewers = 1, channels } = {}) {
  const clock = manualClock();
  const core = createCockpitRelay(mod, { authText });
  const completions = [];
  const relay = {
    ...core,
    handleStreamOpened: (st, now) => (
      completions.push(['opened', st, 1]),
      core.handleStreamOpened(st, now)
    ),
    handleWriteDone: (st, now) => (
      completions.push(['written', st, 1]),
      core.handleWriteDone(st, now)
    ),
    handleWritesDone: (st, n, now) => (
      completions.push(['writtenCounted', st, n]),
      core.handleWritesDone(st, n, now)
    ),
  };
  let lane;
  const driver = createDriver(
    relay,
    {
      perform: (a) => lane.sessions.has(a.session) && lane.perform(lane.sessions.get(a.session), a),
    },
    clock,
  );
  lane = createWsLane(relay, driver);
  const Socket = socketClass(lane);
  const info = { version: wire.limits.protocolVersion, wsUrl: 'ws://memory' };

  const robotEvents = [];
  const robot = await connectRobot(
    {
      info,
      lane: 'websocket',
      WebSocket: Socket,
      clock,
      id: 'r1',
      name: 'Rover',
      model: 'sim',
      manifest: channels ? { ...manifest, channels, panels: [] } : manifest,
      ...(robotToken ? { token: robotToken } : {}),
    },
    { event: (e) => robotEvents.push(e) },
  );
  await clock.advance(0);
  const robotSocket = Socket.last;

  const all = [];
  for (let i = 0; i < viewers; i++) {
    const v = { events: [], frames: [], state: {} };
    v.viewer = connectViewer(mod, wire, info, {
      token: viewerToken,
      WebSocket: Socket,
      clock,
      event: (e) => {
        v.events.push(e);
        if (e.kind === 'state') Object.assign(v.state, e);
      },
      frame: (f) => v.frames.push(f),
    });
    v.viewer.start();
    await clock.advance(0);
    v.socket = Socket.last;
    all.push(v);
  }
  return {
    clock,
    relay,
    completions,
    robot,
    robotEvents,
    robotSocket,
    viewers: all,
    viewer: all[0].viewer,
    viewerEvents: all[0].events,
    viewerSocket: all[0].socket,
    frames: all[0].frames,
    state: all[0].state,
  };
}

const commands = (events) =>
  events.filter((e) => e.kind === 'command').map((e) => `${e.cause}:${e.vx}`);

test('cockpit loop: hello, watch, subs, a frame robot to viewer, and a publish answered', async () => {
  const l = await loop();
  assert.ok(
    l.robotEvents.some((e) => e.kind === 'link' && e.state === 'welcomed'),
    'the robot was welcomed',
  );
  assert.equal(l.state.welcomed, true);
  const robots = l.viewerEvents.filter((e) => e.kind === 'robots').at(-1);
  assert.deepEqual(robots.robots, [{ id: 'r1', name: 'Rover', model: 'sim' }]);

  l.viewer.watch('r1');
  l.viewer.want(['cam', 'say']);
  await l.clock.advance(0);
  const manifests = l.viewerEvents.filter((e) => e.kind === 'manifest');
  assert.equal(manifests.at(-1).manifest.channels.length, 3);
  const subs = l.robotEvents.filter((e) => e.kind === 'subs');
  assert.deepEqual(subs.at(-1).chs, ['cam'], 'only the rx channel is subscribed');
  assert.equal(l.robot.wants('cam'), true);

  assert.equal(l.robot.send('say', enc.encode('x')), 'undeclared');
  assert.equal(
    l.robot.send('cam', new Uint8Array([0xff, 0xd8, 7]), { meta: { w: 1, h: 1 }, ts: 12.5 }),
    'sent',
  );
  await l.clock.advance(0);
  assert.equal(l.frames.length, 1);
  assert.deepEqual(l.frames[0].header, {
    ch: 'cam',
    seq: 1,
    ts: 12.5,
    delivery: 'latest',
    meta: { w: 1, h: 1 },
  });
  assert.deepEqual([...l.frames[0].payload], [0xff, 0xd8, 7]);

  assert.equal(l.viewer.publish('say', enc.encode(JSON.stringify({ text: 'hi' })), 'm1'), 'sent');
  await l.clock.advance(0);
  const published = l.robotEvents.find((e) => e.kind === 'publish');
  assert.equal(published.ch, 'say');
  assert.notEqual(published.id, 'm1', 'the robot sees the relay-assigned id');
  assert.deepEqual(JSON.parse(dec.decode(published.payload)), { text: 'hi' });
  l.robot.ack('say', published.id);
  await l.clock.advance(0);
  const answers = l.viewerEvents.filter((e) => e.kind === 'message' && e.t === 'pub_ack');
  assert.deepEqual(
    answers.map(({ ch, id }) => [ch, id]),
    [['say', 'm1']],
  );

  l.viewer.close();
  await l.robot.stop();
});

test('cockpit loop: the holder drives, resends keep the robot moving, silence trips its watchdog', async () => {
  const l = await loop();
  l.viewer.watch('r1');
  await l.clock.advance(0);
  assert.equal(l.viewer.drive(1, 0, 0), false, 'no lease, no command');
  l.viewer.teleopStart();
  await l.clock.advance(0);
  assert.equal(l.state.teleop, 'held');
  assert.equal(l.viewer.drive(0.5, 0, 0), true);
  await l.clock.advance(0);
  assert.deepEqual(commands(l.robotEvents), ['teleop_start:0', 'twist:0.5']);
  // The viewer core resends every 50 ms: a second of driving never trips the 300 ms watchdog.
  await l.clock.advance(1000);
  const moving = commands(l.robotEvents);
  assert.ok(moving.filter((c) => c === 'twist:0.5').length >= 20, moving.join(' '));
  assert.ok(!moving.includes('watchdog:0'));
  assert.equal(l.robot.command().vx, 0.5);
  // The page freezes (nothing it sends arrives): the robot stops by itself.
  l.viewerSocket.paused = true;
  await l.clock.advance(400);
  assert.equal(commands(l.robotEvents).at(-1), 'watchdog:0');
  assert.equal(l.robot.command().vx, 0);
  // The page comes back, then the holder leaves: the relay releases the lease robot-ward.
  l.viewerSocket.paused = false;
  await l.clock.advance(100);
  assert.equal(l.robot.command().vx, 0.5, 'resends resume while the lease is held');
  const before = l.robot.command().floor;
  l.viewer.close();
  await l.clock.advance(0);
  assert.equal(commands(l.robotEvents).at(-1), 'teleop_stop:0');
  assert.ok(l.robot.command().floor > before, 'teleop_stop raised the generation floor');
  assert.equal(l.relay.stats().robots[0].leaseHolder, false);
  await l.robot.stop();
});

test('cockpit loop: a lost robot socket is a session loss; the SDK reconnects and is welcomed again', async () => {
  const l = await loop();
  l.viewer.watch('r1');
  l.viewer.teleopStart();
  await l.clock.advance(0);
  l.viewer.drive(0.25, 0, 0);
  await l.clock.advance(0);
  assert.equal(l.robot.command().vx, 0.25);
  l.robotSocket.close(1006, 'gone');
  await l.clock.advance(0);
  assert.equal(commands(l.robotEvents).at(-1), 'session_lost:0');
  const links = l.robotEvents.filter((e) => e.kind === 'link').map((e) => e.state);
  assert.equal(links.at(-1), 'reconnecting');
  await l.clock.advance(1000);
  assert.equal(l.robotEvents.filter((e) => e.kind === 'link').at(-1).state, 'welcomed');
  assert.equal(l.robot.welcomed, true);
  assert.equal(l.state.teleop, 'idle', 'the viewer was told the lease is gone');
  l.viewer.close();
  await l.robot.stop();
});

test('cockpit loop: latest frames that arrive out of order reach the app newest-first only', async () => {
  const l = await loop();
  l.viewer.watch('r1');
  l.viewer.want(['cam']);
  await l.clock.advance(0);
  // Frames straight from the relay's side of the socket, in the order streams might finish.
  const frame = (seq) =>
    wire.encodeDataFrame({ ch: 'cam', seq, ts: seq, delivery: 'latest' }, new Uint8Array([seq]))
      .bytes;
  for (const seq of [5, 3, 7, 6, 7, 8]) l.viewerSocket.server.send(frame(seq));
  await l.clock.advance(0);
  assert.deepEqual(
    l.frames.map((f) => f.header.seq),
    [5, 7, 8],
  );
  assert.equal(l.state.stale, 3);
  l.viewer.close();
  await l.robot.stop();
});

test('cockpit loop: auth_failed stops the viewer for good, with the fix', async () => {
  const authText = JSON.stringify({
    tokens: [{ token: 'robot-token-0123456789', roles: ['robot'] }],
  });
  const l = await loop({
    authText,
    robotToken: 'robot-token-0123456789',
    viewerToken: 'not-a-token-0123456789',
  });
  await l.clock.advance(0);
  assert.equal(l.state.link.state, 'closed');
  assert.equal(l.state.link.code, 'auth_failed');
  assert.match(l.state.link.detail, /auth file/);
  assert.equal(l.viewer.stopped, true);
  const sockets = l.viewerSocket;
  await l.clock.advance(60_000);
  assert.equal(l.state.link.state, 'closed', 'no reconnect');
  assert.equal(l.viewerSocket, sockets);
  await l.robot.stop();
});

test('cockpit loop: an unsupported manifest version is reported to the SDK user as manifestUnsupported', async () => {
  await assert.rejects(
    connectRobot({
      info: { version: 7, wsUrl: 'ws://memory' },
      lane: 'websocket',
      id: 'r2',
      manifest: { version: 2, channels: [], screens: [] },
    }),
    (e) => e.code === 'manifestUnsupported' && /manifestUnsupported/.test(e.message),
  );
  await assert.rejects(
    connectRobot({
      info: { version: 7, wsUrl: 'ws://memory' },
      id: 'r2',
      manifest: { version: 1 },
    }),
    (e) => e.code === 'invalidManifest' && /channels/.test(e.message),
  );
});

// Real time passes until `done()` (the lane polls a full socket on a real 10 ms timer).
async function until(done, what) {
  for (let i = 0; i < 400 && !done(); i++) {
    await new Promise((r) => setTimeout(r, 5));
    await settle();
  }
  assert.ok(done(), what);
}

const seqs = (frames, ch) => frames.filter((f) => f.header.ch === ch).map((f) => f.header.seq);

test('cockpit loop: a turn of write completions is one counted handleWritesDone per viewer stream', async () => {
  // Fails on a lane that reports each write done alone (one handleWriteDone, one driver input,
  // per viewer per frame): bench/README.md § cockpit fan-out.
  const l = await loop({
    viewers: 8,
    channels: [{ ch: 'log', encoding: 'text.json.v1', delivery: 'reliable' }],
  });
  for (const v of l.viewers) {
    v.viewer.watch('r1');
    v.viewer.want(['log']);
  }
  await l.clock.advance(0);
  assert.equal(l.robot.send('log', enc.encode('L0')), 'sent'); // every viewer's stream opens
  await l.clock.advance(0);
  l.completions.length = 0;
  for (let i = 1; i <= 3; i++) assert.equal(l.robot.send('log', enc.encode(`L${i}`)), 'sent');
  await l.clock.advance(0);
  for (const v of l.viewers)
    assert.deepEqual(
      v.frames.map((f) => dec.decode(f.payload)),
      ['L0', 'L1', 'L2', 'L3'],
    );
  // The three frames reached the relay in one turn: their 24 writes are 8 counted completions.
  assert.deepEqual(
    l.completions.map(([call, , n]) => [call, n]),
    Array.from({ length: 8 }, () => ['writtenCounted', 3]),
  );
  assert.equal(new Set(l.completions.map(([, st]) => st)).size, 8, 'one per viewer stream');
  for (const v of l.viewers) v.viewer.close();
  await l.robot.stop();
});

test('cockpit loop: a full socket holds its completions: latest frames superseded, reliable ones all in order', async () => {
  const l = await loop({
    channels: [
      { ch: 'cam', encoding: 'jpeg.v1', delivery: 'latest' },
      { ch: 'log', encoding: 'text.json.v1', delivery: 'reliable' },
    ],
  });
  l.viewer.watch('r1');
  l.viewer.want(['cam', 'log']);
  await l.clock.advance(0);
  const n = 20;
  const send = (i) => {
    l.robot.send('cam', new Uint8Array([0xff, 0xd8, i]), { meta: { w: 1, h: 1 } });
    l.robot.send('log', enc.encode(`L${i}`));
  };
  send(1); // with room: both streams open and the frames go
  await l.clock.advance(0);
  const server = l.viewerSocket.server;
  server.bufferedAmount = l.relay.limits.webSocketHighWaterBytes + 1; // no room
  for (let i = 2; i <= n; i++) send(i);
  await l.clock.advance(0);
  await new Promise((r) => setTimeout(r, 30)); // a few of the lane's polls of a full socket
  await settle();
  // Held: the reliable writes in flight went (the socket takes them; their completions wait), the
  // rest queue in the core; a new latest stream does not open, so its frames are superseded.
  const inFlight = l.relay.limits.reliableWritesInFlight;
  assert.deepEqual(
    seqs(l.frames, 'log'),
    Array.from({ length: 1 + inFlight }, (_, i) => i + 1),
  );
  assert.deepEqual(seqs(l.frames, 'cam'), [1]);
  server.bufferedAmount = 0;
  await until(() => seqs(l.frames, 'log').length === n, 'every reliable frame arrives');
  await until(() => seqs(l.frames, 'cam').length === 2, 'the newest latest frame arrives');
  assert.deepEqual(
    seqs(l.frames, 'log'),
    Array.from({ length: n }, (_, i) => i + 1),
  );
  assert.deepEqual(seqs(l.frames, 'cam'), [1, n], 'only the newest of those held');
  assert.equal(l.relay.stats().robots[0].channels.cam.dropped, n - 2);
  l.viewer.close();
  await l.robot.stop();
});
