// Deno viewer clients for the cockpit e2e tests (tests/e2e/cockpit-*.test.mjs): real WebTransport
// to the relay, the WASM wire core for framing. Usage: cockpit_viewer.js <relay-http-url> <scenario>
// Prints one JSON line with what it observed; the Node test asserts on it.
import { loadWire } from '../../../web/glue/wire.js';
import { openWebTransport, relayInfo } from '../../../web/glue/cockpit-transport.js';
import { ViewerLink } from '../lib/raw_viewer.js';

globalThis.addEventListener('unhandledrejection', (e) => e.preventDefault());
const [relay, scenario] = Deno.args;
const wire = await loadWire();
const info = await relayInfo(relay);
const dec = new TextDecoder();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = async (what, fn, timeoutMs = 15000) => {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = fn();
    if (v) return v;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
};

async function viewer(robotId, subs = []) {
  const frames = {};
  const link = new ViewerLink(wire, await openWebTransport(info, '/viewer'), {
    onFrame: (header, payload) => (frames[header.ch] ??= []).push({ header, payload }),
  });
  link.frames = frames;
  await link.send({ t: 'hello', v: 7, role: 'viewer' });
  await link.waitFor((m) => m.t === 'welcome');
  const robots = await link.waitFor(
    (m) => m.t === 'robots' && m.robots.some((r) => r.id === robotId),
  );
  link.robots = robots.robots;
  await link.send({ t: 'watch', robotId });
  link.manifest = (await link.waitFor((m) => m.t === 'manifest' && m.manifest)).manifest;
  for (const ch of subs) await link.send({ t: 'sub', ch });
  return link;
}
const lastJson = (link, ch) => {
  const f = link.frames[ch]?.at(-1);
  return f ? JSON.parse(dec.decode(f.payload)) : null;
};

const out = {};
try {
  if (scenario === 'basic') {
    const v = await viewer('demo-1', ['camera', 'stats', 'chat', 'pose', 'costmap']);
    out.robots = v.robots;
    out.panelKinds = v.manifest.panels.map((p) => p.kind);
    out.layout = v.manifest.layout;
    // latest: JPEG camera frames arrive, each a real JPEG, seq increasing per stream order.
    await until('camera frames', () => (v.frames.camera?.length ?? 0) >= 5);
    out.camera = v.frames.camera.slice(0, 5).map((f) => ({
      seq: f.header.seq,
      delivery: f.header.delivery,
      soi: [...f.payload.slice(0, 2)],
      eoi: [...f.payload.slice(-2)],
      meta: f.header.meta,
    }));
    await until('costmap', () => v.frames.costmap?.length);
    out.costmap = {
      meta: v.frames.costmap[0].header.meta,
      zlibHeader: v.frames.costmap[0].payload[0],
    };
    // subs snapshots reach the robot: its stats list what this viewer wants.
    const stats = await until('stats with subs', () => {
      const s = lastJson(v, 'stats');
      return s && ['camera', 'chat', 'costmap', 'pose', 'stats'].every((c) => s.subs.includes(c))
        ? s
        : null;
    });
    out.statsSubs = stats.subs.sort();
    out.statsSubsN = stats.subsN;
    // reliable: publish on `say`, get pub_ack, and the echo arrives on the chat stream in order.
    for (let i = 0; i < 3; i++) {
      await v.publish(
        'say',
        `m${i}`,
        new TextEncoder().encode(JSON.stringify({ text: `hello ${i}` })),
        i,
      );
      out[`ack${i}`] = await v.waitFor(
        (m) => (m.t === 'pub_ack' || m.t === 'pub_nack') && m.id === `m${i}`,
      );
    }
    await until('three chat echoes', () => (v.frames.chat?.length ?? 0) >= 3);
    out.chat = v.frames.chat.map((f) => ({
      seq: f.header.seq,
      delivery: f.header.delivery,
      ...JSON.parse(dec.decode(f.payload)),
    }));
    out.notPublishable = await (async () => {
      await v.publish('camera', 'bad', new Uint8Array([1]));
      return v.waitFor((m) => m.t === 'pub_nack' && m.id === 'bad');
    })();
    await v.send({ t: 'unsub', ch: 'camera' });
    const after = await until('stats without camera', () => {
      const s = lastJson(v, 'stats');
      return s && !s.subs.includes('camera') ? s : null;
    });
    out.subsNAfterUnsub = after.subsN;
    await v.close();
  } else if (scenario === 'lease') {
    const a = await viewer('demo-1', ['stats']);
    const b = await viewer('demo-1', ['stats']);
    await Promise.all([a.send({ t: 'teleop_start' }), b.send({ t: 'teleop_start' })]);
    const ra = await a.waitFor(
      (m) => m.t === 'teleop_started' || (m.t === 'error' && m.code === 'teleop_held'),
    );
    const rb = await b.waitFor(
      (m) => m.t === 'teleop_started' || (m.t === 'error' && m.code === 'teleop_held'),
    );
    const [holder, loser] = ra.t === 'teleop_started' ? [a, b] : [b, a];
    out.replies = [
      ra.t === 'teleop_started' ? 'teleop_started' : ra.code,
      rb.t === 'teleop_started' ? 'teleop_started' : rb.code,
    ].sort();
    // The loser's twists are ignored; the holder's move the robot.
    const drive = (link, vx, seq) =>
      link.datagram({ t: 'twist', vx, vy: 0, wz: 0, seq, ts: Date.now() / 1000 });
    for (let i = 0; i < 10; i++) {
      drive(loser, -1, i);
      await sleep(30);
    }
    out.loserMoved = Math.abs(lastJson(b, 'stats')?.teleop?.vx ?? 0) > 0;
    let seq = 0;
    const timer = setInterval(() => drive(holder, 0.5, seq++), 50);
    const moving = await until('robot driven', () => {
      const s = lastJson(loser, 'stats');
      return s?.teleop?.vx === 0.5 ? s : null;
    });
    out.driving = moving.teleop;
    clearInterval(timer);
    // Disconnecting the holder stops the robot through teleop_stop (active 0, floor above gen).
    await holder.close();
    const stopped = await until('robot stopped', () => {
      const s = lastJson(loser, 'stats');
      return s && s.teleop.active === 0 && s.teleop.vx === 0 ? s : null;
    });
    out.stopped = stopped.teleop;
    // The lease is free again.
    await loser.send({ t: 'teleop_start' });
    out.regrant = (await loser.waitFor((m) => m.t === 'teleop_started')).t;
    await loser.close();
  } else if (scenario === 'slow') {
    const slow = await viewer('demo-1', ['camera', 'log']);
    const fast = await viewer('demo-1', ['log', 'stats']);
    await until(
      'log frames',
      () => (slow.frames.log?.length ?? 0) > 2 && (fast.frames.log?.length ?? 0) > 2,
    );
    await until('camera frames', () => (slow.frames.camera?.length ?? 0) > 2);
    // The slow viewer stops reading every stream.
    slow.pause();
    const closed = await Promise.race([
      slow.closed.then((i) => ({ closed: i })),
      sleep(30000).then(() => null),
    ]);
    out.slowClosed = closed !== null;
    out.closeReason = closed?.closed?.reason ?? null;
    const fastBefore = fast.frames.log.length;
    await sleep(1000);
    out.fastKeptReceiving = fast.frames.log.length > fastBefore;
    // Nothing lost or repeated. (The robot sends each frame on its own stream, so frames may
    // reach the relay, and so the viewer, in another order than their seq.)
    const logs = fast.frames.log.map((f) => f.header.seq).sort((a, b) => a - b);
    out.fastComplete = logs.every((s, i) => i === 0 || s === logs[i - 1] + 1);
    await fast.close();
  } else if (scenario === 'resume') {
    // A viewer that stops reading its latest channel gets the newest frame when it resumes.
    const v = await viewer('demo-1', ['camera']);
    await until('camera', () => (v.frames.camera?.length ?? 0) > 2);
    v.pause();
    await sleep(2000);
    const seenBefore = Math.max(...v.frames.camera.map((f) => f.header.seq));
    v.resume();
    const fresh = await until('fresh camera', () => {
      const newest = Math.max(...v.frames.camera.map((f) => f.header.seq));
      return newest > seenBefore + 10 ? newest : null;
    });
    out.seenBefore = seenBefore;
    out.afterResume = fresh;
    await v.close();
  }
  out.ok = true;
} catch (e) {
  out.ok = false;
  out.error = String(e?.stack ?? e);
}
console.log(JSON.stringify(out));
Deno.exit(0);
