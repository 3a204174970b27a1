// The cockpit relay at the edge (cockpit-wire-v7-notes.md § Endpoints): robots and viewers reach
// one Durable Object over the WebSocket twins /ws/robot and /ws/viewer, `GET /api/info` answers
// without `wtUrl` (Workers serve no WebTransport) so the cockpit picks WebSocket, and
// `GET /api/stats` returns the core's counters. The core is the same C++ cockpit relay the Deno
// host runs, driven by the same driver (web/glue/driver.js); the WebSocket lane is shared with it
// (web/glue/cockpit-ws-lane.js).
//
// Why one object, and why not hibernatable sockets: the cockpit relay's state is live (sessions,
// leases, subscriptions, teleop watchdogs) and a robot streams continuously, so the object never
// idles while it matters, and a hibernation would drop the lease state the safety chain relies on.
// Robots and viewers reconnect (with backoff) after an eviction, exactly as after a relay restart.
// The one value kept in storage is the newest teleop lease generation (persist_lease_gen): a
// robot keeps its generation floor across the eviction, so the next object starts above it
// whatever machine's clock it runs on. The put is not awaited on purpose: the object's output
// gate holds every message sent after it until it is durable, so no robot ever sees a generation
// that could be lost. Beside it storage holds only the object's alarm (below), which is not a
// key: setting or deleting it never touches the generation.
//
// workerd's WebSockets have no bufferedAmount (cloudflare/workerd#988), so the core paces them
// itself by acknowledged pongs (webSocketBufferedAmount: false; the edge's slow-reader rule,
// docs/cockpit-protocol.md § The slow-reader rule on a WebSocket).
//
// WebRTC video: with the COCKPIT_RTC secret (the Deno relay's --rtc-file JSON, `wrangler secret
// put COCKPIT_RTC`) the object brokers through Cloudflare Realtime, making the core's SFU calls
// with the Realtime client (web/glue/cockpit-sfu.js, `fetch` only). The core's long deadlines
// (the hourly TURN refresh) ride a Durable Object alarm rather than a timer, so they fire even
// when nothing else wakes the object. Every deadline of the core (TURN refresh and retries, SFU
// call timeouts, publish and reap deadlines, the WebSocket liveness rule) is one driver timer,
// always the earliest: whichever it is, it is an alarm when far enough off and a timer otherwise.
import wasmModule from '../../build/wasm/tether-edge.wasm';
import '../glue/modules/tether-edge.js';
import { loadTetherModule } from '../glue/load.js';
import { createCockpitRelay } from '../glue/cockpit-relay.js';
import { createSfuCaller } from '../glue/cockpit-sfu.js';
import { createWsLane } from '../glue/cockpit-ws-lane.js';
import { createDriver } from '../glue/driver.js';
import { createRealtimeClient } from '../sfu/client.js';
import { parseRtcFile } from '../sfu/rtc-file.js';

// Deadlines at least this far off are set as the object's alarm; nearer ones as timers.
const ALARM_AFTER_MS = 60_000;

const LEASE_GEN_KEY = 'cockpit:leaseGen';

// The protocol version /api/info announces, from the wire core (one instance per isolate).
let wireLimits = null;
const protocolVersion = async () =>
  (wireLimits ??= (await loadTetherModule({ wasmModule }, 'wire')).wireLimits()).protocolVersion;

/** The object name every cockpit route goes to: one relay per deployment (per `COCKPIT_FLEET`). */
const fleetName = (env) => env.COCKPIT_FLEET || 'default';

/**
 * Answers the cockpit's routes, or returns null for any other path. `env.COCKPIT` is the Durable
 * Object namespace bound to CockpitRelayObject.
 */
export function routeCockpit(request, env) {
  const url = new URL(request.url);
  if (url.pathname === '/api/info') {
    const ws = `${url.protocol === 'https:' ? 'wss' : 'ws'}://${url.host}`;
    return protocolVersion().then((version) =>
      Response.json({ version, wsUrl: ws }, { headers: { 'access-control-allow-origin': '*' } }),
    );
  }
  const testHook = env.TETHER_TEST_HOOKS === '1' && url.pathname === '/__test/cockpit';
  if (
    url.pathname === '/api/stats' ||
    url.pathname === '/ws/robot' ||
    url.pathname === '/ws/viewer' ||
    testHook
  ) {
    if (!env.COCKPIT) {
      return new Response(
        'the COCKPIT Durable Object binding is missing: add it to wrangler.toml\n',
        { status: 500 },
      );
    }
    return env.COCKPIT.get(env.COCKPIT.idFromName(fleetName(env))).fetch(request);
  }
  return null;
}

export class CockpitRelayObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
    this.ready = null;
    this.alarmFn = null; // the driver's timer while it is the object's alarm
    this.alarmsFired = 0;
  }

  async #init() {
    const mod = await loadTetherModule({ wasmModule }, 'cockpit_relay');
    let rtc = null;
    if (this.env.COCKPIT_RTC) {
      const parsed = parseRtcFile(this.env.COCKPIT_RTC, { source: 'the COCKPIT_RTC secret' });
      if (!parsed.ok) {
        this.failure = `${parsed.error} (set it with \`wrangler secret put COCKPIT_RTC\`)`;
        return;
      }
      rtc = parsed.rtc;
    }
    const leaseGenFloor = (await this.ctx.storage.get(LEASE_GEN_KEY)) ?? 0;
    const started = Date.now();
    // COCKPIT_AUTH holds the relay's auth file (the same JSON as the Deno relay's --auth); empty
    // means open, as on a loopback relay. Set it with `wrangler secret put COCKPIT_AUTH`.
    this.core = createCockpitRelay(mod, {
      authText: this.env.COCKPIT_AUTH ?? '',
      sfu: !!rtc,
      turn: !!rtc?.turnKeyId,
      wallClockMs: started,
      leaseGenFloor,
      webSocketBufferedAmount: false,
    });
    // The driver's one timer holds the core's deadlines; with nobody connected there are none, so
    // an idle object keeps no timer and no alarm.
    this.driver = createDriver(
      this.core,
      {
        perform: (a) => {
          if (a.kind === 'persist_lease_gen') {
            this.ctx.storage.put(LEASE_GEN_KEY, a.gen);
            return;
          }
          if (this.sfu?.perform(a)) return;
          const s = this.lane.sessions.get(a.session);
          if (s) this.lane.perform(s, a);
        },
      },
      {
        now: () => Date.now() - started,
        setTimer: (fn, ms) => this.#setTimer(fn, ms),
        clearTimer: (h) => this.#clearTimer(h),
      },
    );
    this.sfu = rtc ? createSfuCaller(this.core, this.driver, createRealtimeClient(rtc)) : null;
    this.lane = createWsLane(this.core, this.driver);
  }

  #alarmAfter() {
    const ms = Number(this.env.COCKPIT_ALARM_AFTER_MS); // tests shorten it
    return this.env.TETHER_TEST_HOOKS === '1' && ms > 0 ? ms : ALARM_AFTER_MS;
  }

  #setTimer(fn, ms) {
    if (ms < this.#alarmAfter()) return setTimeout(fn, ms);
    this.alarmFn = fn;
    this.ctx.storage.setAlarm(Date.now() + ms);
    return { alarm: true };
  }

  #clearTimer(handle) {
    if (!handle?.alarm) return clearTimeout(handle);
    this.alarmFn = null;
    this.ctx.storage.deleteAlarm();
  }

  /** The Durable Object alarm: the driver's long timer (an object restarted since has none). */
  async alarm() {
    this.alarmsFired++;
    const fn = this.alarmFn;
    this.alarmFn = null;
    fn?.();
  }

  async fetch(request) {
    await (this.ready ??= this.#init());
    if (this.failure) return new Response(`${this.failure}\n`, { status: 500 });
    const url = new URL(request.url);
    if (url.pathname === '/__test/cockpit')
      return Response.json({ alarmsFired: this.alarmsFired, alarmSet: this.alarmFn !== null });
    if (url.pathname === '/api/stats')
      return Response.json(this.core.stats(), { headers: { 'access-control-allow-origin': '*' } });
    const role = url.pathname === '/ws/robot' ? 'robot' : 'viewer';
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
      return new Response(
        `${url.pathname} is a WebSocket endpoint: connect with a WebSocket client\n`,
        { status: 426 },
      );
    }
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    const handlers = this.lane.accept(server, role);
    if (handlers) {
      server.addEventListener('message', (e) => handlers.message(e.data));
      server.addEventListener('close', () => handlers.closed());
      server.addEventListener('error', () => handlers.closed());
    }
    return new Response(null, { status: 101, webSocket: client });
  }
}
