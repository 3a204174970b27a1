// The demo robot: a simulated robot in a small world, connected to a cockpit relay through the
// robot SDK (web/glue/cockpit-robot.js: the robot session core over WebTransport, or the WebSocket
// twin). It publishes jpeg.v1 camera frames (real JPEGs, jpeg-js), costmap.zlib.v1,
// voxels.zlib.v1, pose.json.v1, stats.json.v1 and a chat echo; the core sends only what some
// viewer wants (the relay's subs snapshots) and runs the teleop safety chain whose command this
// simulation obeys. With --webrtc it also has a video.webrtc.v1 camera, `front`: a stamped test
// pattern encoded to H.264 by ffmpeg and sent over WebRTC through the relay's SFU (web/sfu/camera.js;
// the relay needs --rtc-file).
//
// Run: deno run -A --unstable-net web/host/demo-robot.js [--relay http://127.0.0.1:7780]
//        [--id demo-1] [--name "Demo rover"] [--token T] [--camera-hz 10] [--log-hz 2 --log-bytes 64]
//        [--corrupt-costmap-every N]   (fault injection: every Nth costmap is cut short mid-stream)
//        [--future-panel KIND]   (adds a page with a panel kind the cockpit does not know)
//        [--ws]   (use the relay's WebSocket twin even where WebTransport is offered)
//        [--webrtc [--webrtc-size 640x480] [--webrtc-fps 30] [--track-timeout-ms 30000]]
//        [--control-stdin]   (test hook: lines "pause front" / "resume front" stop and restart
//                             the WebRTC camera's media, as a camera outage would)
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';
import { connectRobot } from '../glue/cockpit-robot.js';
import { createCamera } from '../sfu/camera.js';

const require = createRequire(import.meta.url);
const { encode: encodeJpeg } = require('jpeg-js');

globalThis.addEventListener('unhandledrejection', (e) => e.preventDefault());

const flags = parseFlags(Deno.args);
const enc = new TextEncoder();
const json = (v) => enc.encode(JSON.stringify(v));

// --- the world: 20 m x 20 m, walls and a few boxes ------------------------------------------------
const RES = 0.1;
const W = 200;
const H = 200;
const ORIGIN = [-10, -10, 0];
const grid = new Uint8Array(W * H);
for (let y = 0; y < H; y++) {
  for (let x = 0; x < W; x++) {
    const wall = x < 3 || y < 3 || x >= W - 3 || y >= H - 3;
    const box =
      (x > 120 && x < 140 && y > 40 && y < 70) || (x > 40 && x < 60 && y > 120 && y < 160);
    grid[y * W + x] = wall || box ? 100 : x > 100 && y > 150 ? 255 : 0;
  }
}
const costmap = deflateSync(grid);
const voxelRecords = [];
for (let y = 0; y < H; y += 2) {
  for (let x = 0; x < W; x += 2) {
    if (grid[y * W + x] !== 100) continue;
    for (let z = 0; z < 5; z++) voxelRecords.push([x / 2 - 50, y / 2 - 50, z, 200 - z * 30]);
  }
}
const voxelBytes = new Uint8Array(voxelRecords.length * 7);
{
  const dv = new DataView(voxelBytes.buffer);
  voxelRecords.forEach(([ix, iy, iz, v], i) => {
    dv.setInt16(i * 7, ix, true);
    dv.setInt16(i * 7 + 2, iy, true);
    dv.setInt16(i * 7 + 4, iz, true);
    dv.setUint8(i * 7 + 6, v);
  });
}
const voxels = deflateSync(voxelBytes);

const manifest = {
  version: 1,
  channels: [
    { ch: 'camera', encoding: 'jpeg.v1', delivery: 'latest', maxHz: flags.cameraHz },
    { ch: 'costmap', encoding: 'costmap.zlib.v1', delivery: 'latest', maxHz: 1 },
    { ch: 'voxels', encoding: 'voxels.zlib.v1', delivery: 'latest', maxHz: 1 },
    { ch: 'pose', encoding: 'pose.json.v1', delivery: 'latest', maxHz: 20 },
    { ch: 'stats', encoding: 'stats.json.v1', delivery: 'latest', maxHz: 5 },
    { ch: 'cmd_vel', dir: 'tx', encoding: 'twist.json.v1', delivery: 'latest', maxHz: 20 },
    { ch: 'say', dir: 'tx', encoding: 'text.json.v1', delivery: 'reliable', publish: true },
    { ch: 'chat', encoding: 'chat.json.v1', delivery: 'reliable' },
    { ch: 'agent_state', encoding: 'json.v1', delivery: 'latest' },
    { ch: 'audio', dir: 'tx', encoding: 'audio.json.v1', delivery: 'reliable', publish: true },
    { ch: 'log', encoding: 'json.v1', delivery: 'reliable' },
  ],
  panels: [
    { id: 'cam', kind: 'video', title: 'Front camera', channels: ['camera'] },
    { id: 'map', kind: 'map2d', title: 'Map', channels: ['costmap', 'pose'] },
    { id: 'world', kind: 'map3d', title: '3D', channels: ['voxels', 'pose'] },
    {
      id: 'drive',
      kind: 'teleop',
      title: 'Drive',
      channels: ['cmd_vel'],
      params: { maxV: 1, maxW: 1.5 },
    },
    { id: 'talk', kind: 'chat', title: 'Chat', channels: ['say', 'chat', 'agent_state', 'audio'] },
    { id: 'health', kind: 'stats', title: 'Stats', channels: ['stats'] },
    { id: 'events', kind: 'event-log', title: 'Events', channels: ['log'] },
    {
      id: 'plot',
      kind: 'plot',
      title: 'Plot',
      channels: ['pose', 'stats'],
      params: { paths: ['pose.x', 'pose.y', 'stats.teleop.vx'] },
    },
    // --future-panel KIND: a kind no cockpit knows yet, which must still render
    // (cockpit-wire-protocol.md § Manifest).
    ...(flags.futurePanel
      ? [{ id: 'future', kind: flags.futurePanel, title: 'Future', channels: ['log'] }]
      : []),
  ],
  layout: {
    row: [{ col: ['cam', 'drive'], shares: [3, 1] }, 'map', { col: ['talk', 'health'] }],
    shares: [2, 3, 1],
  },
  pages: ['world', 'events', 'plot', ...(flags.futurePanel ? ['future'] : [])],
};
const [webrtcW, webrtcH] = flags.webrtcSize.split('x').map(Number);
if (flags.webrtc) {
  manifest.channels.push({ ch: 'front', encoding: 'video.webrtc.v1', delivery: 'latest' });
  manifest.panels.push({ id: 'front', kind: 'video', title: 'WebRTC camera', channels: ['front'] });
  manifest.layout.row[0] = { col: ['cam', 'front', 'drive'], shares: [3, 3, 1] };
}

// The WebRTC camera: the robot session core says when to make its peer connection (a fresh one per
// relay session) and what to apply; the camera says when its connection fails and when its media
// resumed after an outage (the core decides whether that needs rtc_stalled).
let robot = null;
const camera = flags.webrtc
  ? await createCamera({
      tracks: [{ ch: 'front', width: webrtcW, height: webrtcH, fps: flags.webrtcFps }],
      onEvent(e) {
        if (e.type === 'connection') {
          console.log(`demo robot: WebRTC connection ${e.state}`);
          robot?.rtcState(e.state);
        } else if (e.type === 'resumed') {
          const stalled = robot?.mediaResumed(e.ch, e.gapMs);
          console.log(
            `demo robot: camera ${e.ch} resumed after ${e.gapMs} ms${stalled ? ' (rtc_stalled sent)' : ''}`,
          );
        } else if (e.type === 'encoder_exit') {
          console.error(`demo robot: the ${e.ch} encoder exited (${e.code}): ${e.stderr}`);
        }
      },
    })
  : null;
// --- state ----------------------------------------------------------------------------------
const pose = { x: 0, y: 0, z: 0, yaw: 0 };
let command = { vx: 0, vy: 0, wz: 0, active: 0, floor: 0 }; // the safety chain's, from its events
let wanted = [];
let subsN = 0;
let framesSent = 0;

// The robot session: the core validates the manifest (an invalid one throws here, naming the
// field), says hello, reconnects, and decides what is sent.
robot = await connectRobot(
  {
    relay: flags.relay,
    lane: flags.ws ? 'websocket' : 'auto',
    id: flags.id,
    name: flags.name,
    model: 'tether-sim',
    manifest,
    ...(flags.token ? { token: flags.token } : {}),
    ...(camera ? { webrtc: camera, trackTimeoutMs: flags.trackTimeoutMs } : {}),
  },
  {
    event: onEvent,
    rtcError: (/** @type {any} */ e) => console.error(`demo robot: WebRTC: ${e?.message ?? e}`),
  },
);

if (flags.controlStdin && camera) {
  (async () => {
    const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
    let buffered = '';
    for await (const chunk of lines) {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const [cmd, ch] = buffered.slice(0, nl).trim().split(/\s+/);
        buffered = buffered.slice(nl + 1);
        if (cmd === 'pause') {
          camera.pause(ch);
          console.log(`demo robot: camera ${ch} paused`);
        } else if (cmd === 'resume') camera.resume(ch);
      }
    }
  })().catch((e) => console.error(`demo robot: stdin: ${e.message}`));
}

for (const sig of ['SIGINT', 'SIGTERM'])
  Deno.addSignalListener(sig, () => {
    // ffmpeg is the camera's child: stop it by PID before leaving.
    Promise.resolve(camera?.close()).finally(() => Deno.exit(0));
  });

function send(ch, payload, meta) {
  if (robot.send(ch, payload, meta ? { meta } : {}) === 'sent') framesSent++;
}

function onEvent(e) {
  switch (e.kind) {
    case 'link':
      if (e.state === 'welcomed') console.log(`demo robot ${flags.id} welcomed by ${flags.relay}`);
      else if (e.state === 'reconnecting')
        console.error(`demo robot: session ended (${e.detail}); reconnecting`);
      else if (e.state === 'stopped') {
        console.error(`demo robot: stopped: ${e.code ?? ''} ${e.detail ?? ''}`);
        Promise.resolve(camera?.close()).finally(() => Deno.exit(1));
      }
      return;
    case 'error':
      console.error(`demo robot: relay error ${e.code}: ${e.message}`);
      return;
    case 'subs':
      subsN = e.n;
      wanted = e.chs;
      console.log(`demo robot: subs n=${subsN} [${wanted.join(', ')}]`);
      return;
    case 'command':
      command = e;
      return;
    case 'publish':
      onPublish(e);
      return;
    case 'rtc':
      console.log(`demo robot: WebRTC ${e.pc}`);
      return;
  }
}

function onPublish({ ch, id, payload }) {
  if (!id) return;
  if (ch !== 'say') return void robot.ack(ch, id);
  let text = '';
  try {
    text = String(JSON.parse(new TextDecoder().decode(payload)).text ?? '');
  } catch {
    robot.nack(ch, id, 'bad_value', 'expected {"text": "..."}');
    return;
  }
  robot.ack(ch, id);
  send('chat', json({ from: 'robot', text: `echo: ${text}`, ts: Date.now() / 1000 }));
}

// The physics tick: 50 Hz, bounded speeds; the safety chain's command decides.
setInterval(() => {
  const cmd = command;
  const dt = 0.02;
  const vx = Math.max(-1, Math.min(1, cmd.vx));
  const wz = Math.max(-1.5, Math.min(1.5, cmd.wz));
  pose.yaw += wz * dt;
  pose.x = Math.max(-9.5, Math.min(9.5, pose.x + vx * Math.cos(pose.yaw) * dt));
  pose.y = Math.max(-9.5, Math.min(9.5, pose.y + vx * Math.sin(pose.yaw) * dt));
}, 20);

setInterval(() => send('pose', json({ ...pose, ts: Date.now() / 1000 })), 50);

const started = performance.now();
setInterval(() => {
  const cmd = command;
  send(
    'stats',
    json({
      uptimeS: Math.round((performance.now() - started) / 1000),
      framesSent,
      subs: wanted,
      subsN,
      teleop: { active: cmd.active, floor: cmd.floor, vx: cmd.vx, vy: cmd.vy, wz: cmd.wz },
      pose,
    }),
  );
  send('agent_state', json({ state: cmd.active ? 'driven' : 'idle' }));
}, 200);

let costmapN = 0;
setInterval(() => {
  costmapN++;
  // A truncated zlib stream: the decoder must refuse it and the cockpit keep the last good map.
  const corrupt = flags.corruptCostmapEvery > 0 && costmapN % flags.corruptCostmapEvery === 0;
  send('costmap', corrupt ? costmap.subarray(0, costmap.length >> 1) : costmap, {
    w: W,
    h: H,
    res: RES,
    origin: [ORIGIN[0], ORIGIN[1], 0],
  });
  send('voxels', voxels, { n: voxelRecords.length, res: RES * 2, origin: ORIGIN });
}, 1000);

// A reliable event log with levels (the cockpit's event-log panel filters on them); --log-hz and
// --log-bytes turn it into a load generator. Every 5th entry is a warning and every 10th an error.
let logN = 0;
const logPad = 'x'.repeat(Math.max(0, flags.logBytes - 100));
function logLine(n) {
  if (n % 10 === 9) return ['error', `lidar dropout: no scan for 250 ms (#${n})`];
  if (n % 5 === 4) return ['warn', `battery at ${Math.max(5, 90 - (n % 80))}% (#${n})`];
  if (n % 3 === 0) return ['debug', `planner tick at x=${pose.x.toFixed(2)} (#${n})`];
  return ['info', `heartbeat, ${framesSent} frames sent (#${n})`];
}
setInterval(() => {
  const [level, msg] = logLine(logN);
  send('log', json({ n: logN++, ts: Date.now() / 1000, level, msg, name: 'demo', pad: logPad }));
}, 1000 / flags.logHz);

// Camera: a rendered horizon that turns with the robot's yaw, encoded as a real JPEG.
const CW = 160;
const CH = 120;
const rgba = new Uint8Array(CW * CH * 4);
setInterval(() => {
  if (!robot.wants('camera')) return;
  const shift = Math.round((pose.yaw / (2 * Math.PI)) * CW * 4);
  for (let y = 0; y < CH; y++) {
    for (let x = 0; x < CW; x++) {
      const i = (y * CW + x) * 4;
      const stripe = (((x + shift) % 40) + 40) % 40 < 20;
      if (y < CH / 2) {
        rgba[i] = 90;
        rgba[i + 1] = 150;
        rgba[i + 2] = 230;
      } else {
        rgba[i] = stripe ? 70 : 110;
        rgba[i + 1] = stripe ? 120 : 90;
        rgba[i + 2] = 60;
      }
      rgba[i + 3] = 255;
    }
  }
  const jpeg = encodeJpeg({ data: rgba, width: CW, height: CH }, 60).data;
  send('camera', new Uint8Array(jpeg), { w: CW, h: CH });
}, 1000 / flags.cameraHz);

function parseFlags(args) {
  const f = {
    relay: 'http://127.0.0.1:7780',
    id: 'demo-1',
    name: 'Demo rover',
    token: '',
    cameraHz: 10,
    logHz: 2,
    logBytes: 64,
    corruptCostmapEvery: 0,
    futurePanel: '',
    ws: false,
    webrtc: false,
    webrtcSize: '640x480',
    webrtcFps: 30,
    trackTimeoutMs: 30_000,
    controlStdin: false,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const v = args[i + 1];
    if (a === '--relay') f.relay = v;
    else if (a === '--id') f.id = v;
    else if (a === '--name') f.name = v;
    else if (a === '--token') f.token = v;
    else if (a === '--camera-hz') f.cameraHz = Number(v);
    else if (a === '--log-hz') f.logHz = Number(v);
    else if (a === '--log-bytes') f.logBytes = Number(v);
    else if (a === '--corrupt-costmap-every') f.corruptCostmapEvery = Number(v);
    else if (a === '--future-panel') f.futurePanel = v;
    else if (a === '--webrtc-size') f.webrtcSize = v;
    else if (a === '--webrtc-fps') f.webrtcFps = Number(v);
    else if (a === '--track-timeout-ms') f.trackTimeoutMs = Number(v);
    else if (a === '--ws' || a === '--webrtc' || a === '--control-stdin') {
      f[{ '--ws': 'ws', '--webrtc': 'webrtc', '--control-stdin': 'controlStdin' }[a]] = true;
      continue;
    } else {
      console.error(
        `demo robot: unknown flag ${a}; flags: --relay URL --id ID --name NAME --token T --camera-hz N --log-hz N --log-bytes N --corrupt-costmap-every N --future-panel KIND --ws --webrtc --webrtc-size WxH --webrtc-fps N --track-timeout-ms N --control-stdin`,
      );
      Deno.exit(2);
    }
    i++;
  }
  return f;
}
