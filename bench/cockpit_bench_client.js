// Deno side of bench/cockpit.bench.mjs: one robot and N viewers on one reliable channel through
// the relay, over WebTransport or WebSocket; the same fan-out through the bare server of
// bench/cockpit_raw_fanout.js (the physical limit: 'fan-oneshot' and 'fan-ws' have the relay's
// stream shapes, 'fan' a persistent robot stream); and a raw loopback WebTransport echo, one
// stream and one receiver. Usage: cockpit_bench_client.js <relay-http | wtPort:hex:wsPort>
// <wt|ws|fan|fan-oneshot|fan-ws|echo> <bytes> <seconds> [viewers]
// Prints one JSON line: {fps, p50, p99, frames}. Robot and viewers share this process's clock, so
// latency is receive time minus the send time carried in the payload. A window of frames in flight
// paces the robot by the slowest viewer, so nothing is dropped and every frame is timed.
import { loadWire } from '../web/glue/wire.js';
import { oneShot, openWebTransport, relayInfo } from '../web/glue/cockpit-transport.js';
import { connectRobot } from '../web/glue/cockpit-robot.js';
import { listenWebTransport, makeCertificate, pinnedHashes } from '../web/host/cert.js';
import { ViewerLink } from '../tests/e2e/lib/raw_viewer.js';

globalThis.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  console.error('bench client: unhandled rejection', e.reason);
});
const [relay, mode, bytesArg, secondsArg, viewersArg] = Deno.args;
const SIZE = Number(bytesArg);
const SECONDS = Number(secondsArg);
const VIEWERS = Number(viewersArg ?? 8);
const WINDOW = SIZE > 64 * 1024 ? 4 : 32;
const wire = await loadWire();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();
const manifest = {
  version: 1,
  channels: [{ ch: 'bench', encoding: 'bytes.v1', delivery: 'reliable' }],
};
// One robot id per case: a finished case's robot lingers until the relay's idle timeout.
const ROBOT = `bench-${mode}-${SIZE}`;
const robotConfig = { relay, id: ROBOT, name: 'bench', model: 'bench', manifest };
const hello = {
  t: 'hello',
  v: wire.limits.protocolVersion,
  role: 'robot',
  robot: { id: ROBOT, name: 'bench', model: 'bench' },
  manifest,
};

const latencies = [];
let received = 0;
const delivered = new Map(); // seq -> viewers that got it
function onFrame(payload) {
  const sent = new DataView(payload.buffer, payload.byteOffset, 8).getFloat64(0, true);
  const seq = new DataView(payload.buffer, payload.byteOffset + 8, 8).getFloat64(0, true);
  latencies.push(performance.now() - sent);
  received++;
  delivered.set(seq, (delivered.get(seq) ?? 0) + 1);
}
function payloadFor(seq) {
  const p = new Uint8Array(SIZE);
  const dv = new DataView(p.buffer);
  dv.setFloat64(0, performance.now(), true);
  dv.setFloat64(8, seq, true);
  return p;
}
const ctlFrame = (m, seq = 0) =>
  wire.encodeDataFrame(
    { ch: '@control', seq, ts: 0, delivery: 'reliable' },
    enc.encode(JSON.stringify(m)),
  ).bytes;

async function run(sendFrame) {
  console.error('bench client: running'); // bench/cockpit_profile.js starts its profiles here
  let seq = 0;
  const end = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  while (performance.now() < end) {
    // Pace by the slowest viewer: frame seq - WINDOW must have reached everyone.
    const gate = seq - WINDOW;
    let spins = 0;
    while (gate >= 0 && (delivered.get(gate) ?? 0) < VIEWERS) {
      await sleep(spins++ < 50 ? 0 : 1);
      if (performance.now() > end + 5000) break;
    }
    delivered.delete(gate - 1);
    await sendFrame(seq, payloadFor(seq));
    seq++;
  }
  await sleep(500);
  const elapsed = (performance.now() - t0) / 1000;
  return { frames: received, fps: received / elapsed / VIEWERS };
}

function summary(r) {
  latencies.sort((a, b) => a - b);
  const q = (p) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { ...r, p50: q(0.5), p99: q(0.99) };
}

if (mode === 'wt') {
  const info = await relayInfo(relay);
  // The robot SDK (the robot session core through the driver), as a robot runs it.
  let welcomed;
  const ready = new Promise((r) => (welcomed = r));
  const robot = await connectRobot(
    { ...robotConfig, lane: 'webtransport' },
    { event: (e) => e.kind === 'link' && e.state === 'welcomed' && welcomed() },
  );
  await ready;
  const viewers = [];
  for (let i = 0; i < VIEWERS; i++) {
    const v = new ViewerLink(wire, await openWebTransport(info, '/viewer'), {
      onFrame: (h, p) => onFrame(p),
    });
    await v.send({ t: 'hello', v: wire.limits.protocolVersion, role: 'viewer' });
    await v.waitFor((m) => m.t === 'robots' && m.robots.length);
    await v.send({ t: 'watch', robotId: ROBOT });
    await v.waitFor((m) => m.t === 'manifest');
    await v.send({ t: 'sub', ch: 'bench' });
    viewers.push(v);
  }
  while (!robot.wants('bench')) await sleep(10);
  await sleep(300);
  const r = await run(async (seq, p) => {
    const sent = robot.send('bench', p, { ts: 0 });
    if (sent !== 'sent') throw new Error(`bench: the robot did not send (${sent})`);
  });
  console.log(JSON.stringify(summary(r)));
} else if (mode === 'ws') {
  const info = await relayInfo(relay);
  const open = (path, onMessage) =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`${info.wsUrl}${path}`);
      ws.binaryType = 'arraybuffer';
      ws.onmessage = (e) => onMessage(new Uint8Array(e.data));
      ws.onopen = () => resolve(ws);
      ws.onerror = reject;
    });
  let welcomed = false;
  const robot = await open('/ws/robot', (b) => {
    const f = wire.decodeDataFrame(b);
    if (
      f.ok &&
      f.header.ch === '@control' &&
      new TextDecoder().decode(f.payload).includes('welcome')
    )
      welcomed = true;
  });
  robot.send(ctlFrame(hello));
  while (!welcomed) await sleep(10);
  for (let i = 0; i < VIEWERS; i++) {
    let ready = false;
    const v = await open('/ws/viewer', (b) => {
      const f = wire.decodeDataFrame(b);
      if (!f.ok) return;
      if (f.header.ch === '@control') {
        if (new TextDecoder().decode(f.payload).includes('"manifest"')) ready = true;
      } else onFrame(f.payload);
    });
    v.send(ctlFrame({ t: 'hello', v: wire.limits.protocolVersion, role: 'viewer' }, 0));
    v.send(ctlFrame({ t: 'watch', robotId: ROBOT }, 1));
    while (!ready) await sleep(5);
    v.send(ctlFrame({ t: 'sub', ch: 'bench' }, 2));
  }
  await sleep(300);
  const r = await run(async (seq, p) => {
    robot.send(wire.encodeDataFrame({ ch: 'bench', seq, ts: 0, delivery: 'reliable' }, p).bytes);
  });
  console.log(JSON.stringify(summary(r)));
} else if (mode === 'fan-ws') {
  // The WebSocket twin of the raw fan-out: one message per frame, forwarded to every viewer.
  const [, , wsPort] = relay.split(':');
  const open = (path, onMessage) =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${wsPort}${path}`);
      ws.binaryType = 'arraybuffer';
      ws.onmessage = (e) => onMessage(new Uint8Array(e.data));
      ws.onopen = () => resolve(ws);
      ws.onerror = reject;
    });
  for (let i = 0; i < VIEWERS; i++)
    await open('/ws/viewer', (b) => {
      const f = wire.decodeDataFrame(b);
      if (f.ok) onFrame(f.payload);
    });
  const robot = await open('/ws/robot', () => {});
  await sleep(300);
  const r = await run(async (seq, p) => {
    robot.send(wire.encodeDataFrame({ ch: 'bench', seq, ts: 0, delivery: 'reliable' }, p).bytes);
  });
  console.log(JSON.stringify(summary(r)));
} else if (mode === 'fan' || mode === 'fan-oneshot') {
  // The physical limit of the same fan-out: bench/cockpit_raw_fanout.js (a bare WebTransport
  // server in its own process) forwards each frame to every viewer on one persistent stream, as
  // the relay does for a reliable channel. The robot sends on one persistent stream ('fan') or on
  // a one-shot stream per frame ('fan-oneshot', the protocol's robot leg, workaround 1). The
  // viewers decode frames as the relay's viewers do (tests/e2e/lib/raw_viewer.js).
  const [port, hex] = relay.split(':');
  const url = `https://127.0.0.1:${port}`;
  const open = async (path) => {
    const wt = new WebTransport(`${url}${path}`, { serverCertificateHashes: pinnedHashes(hex) });
    await wt.ready;
    return wt;
  };
  for (let i = 0; i < VIEWERS; i++) {
    const wt = await open('/viewer');
    const { value: readable } = await wt.incomingUnidirectionalStreams.getReader().read();
    (async () => {
      const decoder = new wire.DataFrameStream();
      const r = readable.getReader();
      for (;;) {
        const { value, done } = await r.read();
        if (done) return;
        for (const f of decoder.push(value).frames) onFrame(f.payload);
      }
    })();
  }
  const robotWt = await open(mode === 'fan' ? '/robot' : '/robot?oneshot=1');
  const encode = (seq, p) =>
    wire.encodeDataFrame({ ch: 'bench', seq, ts: 0, delivery: 'reliable' }, p).bytes;
  let send;
  if (mode === 'fan') {
    const w = (await robotWt.createBidirectionalStream()).writable.getWriter();
    send = (seq, p) => w.write(encode(seq, p));
  } else {
    send = (seq, p) => {
      oneShot(robotWt, encode(seq, p)).catch(() => {});
    };
  }
  await sleep(300);
  const r = await run(send);
  console.log(JSON.stringify(summary(r)));
} else if (mode === 'echo') {
  // Context, not the limit (one receiver, not eight): a raw Deno WebTransport server in this
  // process echoing one bidirectional stream of length-prefixed frames; latency is half the round
  // trip.
  const cert = await makeCertificate();
  const { hex } = cert;
  const { endpoint, listener } = listenWebTransport({ cert });
  (async () => {
    const wt = await Deno.upgradeWebTransport(await (await listener.incoming()).accept());
    await wt.ready;
    const { value: s } = await wt.incomingBidirectionalStreams.getReader().read();
    await s.readable.pipeTo(s.writable);
  })();
  const wt = new WebTransport(`https://127.0.0.1:${endpoint.addr.port}/echo`, {
    serverCertificateHashes: pinnedHashes(hex),
  });
  await wt.ready;
  const s = await wt.createBidirectionalStream();
  const w = s.writable.getWriter();
  const decoder = new wire.DataFrameStream();
  (async () => {
    const r = s.readable.getReader();
    for (;;) {
      const { value, done } = await r.read();
      if (done) return;
      for (const f of decoder.push(value).frames) {
        const sent = new DataView(f.payload.buffer, f.payload.byteOffset, 8).getFloat64(0, true);
        const seq = new DataView(f.payload.buffer, f.payload.byteOffset + 8, 8).getFloat64(0, true);
        latencies.push((performance.now() - sent) / 2);
        received++;
        delivered.set(seq, VIEWERS);
      }
    }
  })();
  const r = await run((seq, p) =>
    w.write(wire.encodeDataFrame({ ch: 'bench', seq, ts: 0, delivery: 'reliable' }, p).bytes),
  );
  r.fps *= VIEWERS; // one receiver
  console.log(JSON.stringify(summary(r)));
  endpoint.close();
}
Deno.exit(0);
