// Cockpit clients in this Node process, over real WebSockets (`ws`) to a real relay (the Deno host
// or the edge Worker under workerd): the robot SDK (web/glue/cockpit-robot.js) and the viewer
// client (web/glue/cockpit-viewer.js) on the WASM build, with what they report kept for the test
// to assert on. A viewer's socket can stop reading (its TCP receive side paused, as a frozen or
// starved reader is), so the relay's slow-reader rules meet a real kernel buffer.
import { readFileSync, readdirSync } from 'node:fs';
import WebSocket from 'ws';
import { loadTetherModule } from '../../../web/glue/load.js';
import { createWire } from '../../../web/glue/wire.js';
import { connectRobot } from '../../../web/glue/cockpit-robot.js';
import { connectViewer } from '../../../web/glue/cockpit-viewer.js';

export const mod = await loadTetherModule();
export const wire = createWire(mod);
const enc = new TextEncoder();

/** GET /api/info of a relay. */
export async function infoOf(http) {
  const res = await fetch(`${http}/api/info`);
  if (!res.ok) throw new Error(`${http}/api/info answered ${res.status}`);
  return res.json();
}

/** Polls `fn` until it returns truthy; throws naming `what` if it never does. */
export async function until(fn, what, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// A `ws` WebSocket class that remembers its instances, so a test can reach the socket under a
// client (one class per client).
function trackedSocket() {
  return class TrackedSocket extends WebSocket {
    static all = [];
    constructor(url) {
      super(url);
      TrackedSocket.all.push(this);
      this.on('error', () => {});
    }
  };
}

/**
 * The robot SDK over a WebSocket. `onPublish(e, robot)` answers published values (default: ack).
 * @returns {Promise<{robot, events: object[], link: () => string|undefined, welcomes: () => number}>}
 */
export async function nodeRobot(http, config, { onPublish } = {}) {
  const events = [];
  const seqOn = new Map(); // channel -> the seq of the last frame stream() sent on it
  const holder = {};
  const robot = await connectRobot(
    { relay: http, lane: 'websocket', WebSocket: trackedSocket(), ...config },
    {
      event(e) {
        events.push(e);
        if (e.kind === 'publish' && e.id)
          (onPublish ?? ((p, r) => r.ack(p.ch, p.id)))(e, holder.robot);
      },
    },
  );
  holder.robot = robot;
  return {
    robot,
    events,
    link: () => events.filter((e) => e.kind === 'link').at(-1)?.state,
    welcomes: () => events.filter((e) => e.kind === 'link' && e.state === 'welcomed').length,
    /** Sends `payload(n)` on `ch` every `everyMs` while some viewer wants it; stop() ends it. */
    stream(ch, payload, everyMs) {
      let n = 0;
      // The core numbers each channel's frames 1, 2, ... for the life of the session object, so a
      // second stream on a channel goes on from the first one's last seq.
      const base = seqOn.get(ch) ?? 0;
      const t = setInterval(() => {
        if (robot.wants(ch) && robot.send(ch, payload(n + 1)) === 'sent') seqOn.set(ch, base + ++n);
      }, everyMs);
      return { stop: () => clearInterval(t), sent: () => n, lastSeq: () => base + n };
    },
  };
}

/** The viewer client over a WebSocket, started; its state, frames and relay messages are kept. */
export function nodeViewer(info, { token } = {}) {
  const state = {};
  const frames = {};
  const messages = [];
  const manifests = [];
  const robots = []; // every robots list the relay pushed, oldest first
  const TrackedSocket = trackedSocket();
  const viewer = connectViewer(
    mod,
    wire,
    { ...info, wtUrl: undefined },
    {
      token,
      WebSocket: TrackedSocket,
      event(e) {
        if (e.kind === 'state') Object.assign(state, e);
        else if (e.kind === 'message') messages.push(e);
        else if (e.kind === 'manifest') manifests.push(e);
        else if (e.kind === 'robots') robots.push(e.robots.map((r) => r.id));
      },
      frame: (f) =>
        (frames[f.header.ch] ??= []).push({ seq: f.header.seq, bytes: f.payload.length }),
    },
  );
  viewer.start();
  return {
    viewer,
    state,
    frames,
    messages,
    manifests,
    robots,
    /** Every socket this viewer opened, oldest first. */
    sockets: () => TrackedSocket.all,
    socket: () => TrackedSocket.all.at(-1),
    /** Stops reading: the kernel's receive buffer fills and TCP's window closes, as for a reader
     * that stopped (its own sends still go). */
    pause() {
      this.socket()._socket.pause();
    },
    resume() {
      this.socket()._socket.resume();
    },
    publish: (ch, value, id) => viewer.publish(ch, enc.encode(JSON.stringify(value)), id),
    answer: (id) => messages.find((m) => (m.t === 'pub_ack' || m.t === 'pub_nack') && m.id === id),
    close: () => viewer.close(),
  };
}

/** Resident memory of a process in MiB (Linux /proc), for the slow-reader bounds. */
export function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The workerd process Miniflare started for this Node process (its child), by PID. */
export function workerdPid() {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const comm = /\(([^)]*)\)/.exec(stat)?.[1];
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === 'workerd' && ppid === process.pid) return Number(d);
    } catch {}
  }
  return null;
}
