// The cockpit relay at the edge (cockpit-wire-v7-notes.md § Endpoints): robots and viewers reach
// one Durable Object over the WebSocket twins /ws/robot and /ws/viewer, `GET /api/info` answers
// without `wtUrl` (Workers serve no WebTransport) so the cockpit picks WebSocket, and
// `GET /api/stats` returns the core's counters. The core is the same C++ cockpit relay the Deno
// host runs, driven by the same driver (web/glue/driver.js); the WebSocket lane is shared with it
// (web/glue/cockpit-ws-lane.js).
//
// One object, or one per robot: by default one object serves the fleet (COCKPIT_FLEET). With
// COCKPIT_OBJECTS = "per-robot" the fleet's object is a directory and each robot's sessions live in
// an object of their own; the Worker's switchboard holds each client socket and moves it between
// objects when the core hands a session off (docs/cockpit-fleet.md, src/cockpit/fleet.hpp).
//
// Why not hibernatable sockets: the cockpit relay's state is live (sessions,
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
// WebRTC video: with the COCKPIT_RTC secret (the Deno relay's --rtc-file JSON, `make edge-secret
// NAME=COCKPIT_RTC`) the object brokers through Cloudflare Realtime, making the core's SFU calls
// with the Realtime client (web/glue/cockpit-sfu.js, `fetch` only). The core's long deadlines
// (the hourly TURN refresh) ride a Durable Object alarm rather than a timer, so they fire even
// when nothing else wakes the object. Every deadline of the core (TURN refresh and retries, SFU
// call timeouts, publish and reap deadlines, the WebSocket liveness rule) is one driver timer,
// always the earliest: whichever it is, it is an alarm when far enough off and a timer otherwise.
import wasmModule from '../../build/wasm/tether-cockpit-relay.wasm';
import '../glue/modules/tether-cockpit-relay.js';
import { loadTetherModule } from '../glue/load.js';
import { createCockpitRelay } from '../glue/cockpit-relay.js';
import { createSfuCaller } from '../glue/cockpit-sfu.js';
import { createWsLane } from '../glue/cockpit-ws-lane.js';
import { createDriver } from '../glue/driver.js';
import { createRealtimeClient } from '../sfu/client.js';
import { parseRtcFile } from '../sfu/rtc-file.js';
import { isCockpitPath } from './routes.js';

// Deadlines at least this far off are set as the object's alarm; nearer ones as timers.
const ALARM_AFTER_MS = 60_000;

const LEASE_GEN_KEY = 'cockpit:leaseGen';

// The protocol version /api/info announces, from the wire core (one instance per isolate).
let wireLimits = null;
/** @param {string} binding @returns {Promise<any>} the module's Embind exports */
const tetherModule = (binding) => loadTetherModule({ wasmModule }, binding);
const protocolVersion = async () =>
  (wireLimits ??= (await tetherModule('wire')).wireLimits()).protocolVersion;

// The relay core's bounds (one module instance per isolate, shared with the objects).
let relayLimits = null;
const cockpitLimits = async () =>
  (relayLimits ??= (await tetherModule('cockpit_relay')).cockpitRelayLimits());

/** The object name every cockpit route goes to: one relay per deployment (per `COCKPIT_FLEET`). */
const fleetName = (env) => env.COCKPIT_FLEET || 'default';

// COCKPIT_OBJECTS = "per-robot" splits the fleet (docs/cockpit-fleet.md): the object named by the
// fleet is its directory, and each robot's sessions live in an object of their own.
const perRobot = (env) => env.COCKPIT_OBJECTS === 'per-robot';
const PART = 'x-tether-cockpit-part';
const ROBOT = 'x-tether-cockpit-robot';
const HANDOFF = 'x-tether-cockpit-handoff';
// The text marker the switchboard sends after a ticket; the old object echoes it back once every
// client message it received before it is bounced (switchboard below).
const DRAINED = 'drained';

function objectOf(env, robot) {
  const name = robot ? `${fleetName(env)}/robots/${robot}` : fleetName(env);
  return env.COCKPIT.get(env.COCKPIT.idFromName(name));
}

// A request for an object, naming the part it serves (and its robot).
function toObject(env, robot, path, headers = {}) {
  const stub = objectOf(env, robot);
  const h = new Headers(headers);
  h.set(PART, robot ? 'robot' : 'directory');
  if (robot) h.set(ROBOT, robot);
  return stub.fetch(new Request(`https://cockpit${path}`, { headers: h }));
}

async function upstream(env, robot, role, handoff) {
  const headers = { upgrade: 'websocket' };
  if (handoff) headers[HANDOFF] = '1';
  const res = await toObject(env, robot, `/ws/${role}`, headers);
  const ws = res.webSocket;
  if (!ws) throw new Error(`the cockpit object answered ${res.status}: ${await res.text()}`);
  ws.accept();
  return ws;
}

/**
 * The switchboard (docs/cockpit-fleet.md § The switchboard): the client's socket stays here while
 * its session moves between objects. Binary messages are passed through untouched. A text message
 * from an object is a handoff ticket its core wrote: the switchboard opens the named robot's
 * object, gives it the ticket, and sends the old object DRAINED; the old object bounces every
 * client message that reached it after the move began, then echoes DRAINED, so nothing the client
 * sent is lost or reordered. Client messages meanwhile wait here, at most the core's
 * maxHandoffQueuedMessages.
 */
async function switchboard(request, env, role) {
  const { maxHandoffQueuedMessages: maxQueued } = await cockpitLimits();
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  let up = null;
  let move = null; // {old, next, bounced: [], drained, again}
  const waiting = [];
  const closeAll = (code, reason) => {
    for (const ws of [up, move?.old, move?.next]) {
      try {
        ws?.close(code, reason);
      } catch {}
    }
    try {
      server.close(code, reason);
    } catch {}
  };
  const fromClient = (data) => {
    if (typeof data === 'string') return; // frames are binary; text is the objects' channel
    if (up && !move) return up.send(data);
    if (waiting.length >= maxQueued) return closeAll(1013, 'the relay is moving this session');
    waiting.push(data);
  };
  const finish = () => {
    if (!move?.next || !move.drained) return;
    try {
      move.old.close(1000, 'moved');
    } catch {}
    up = move.next;
    const again = move.again;
    move = null;
    for (const d of waiting.splice(0)) up.send(d);
    if (again) begin(again);
  };
  const attach = (ws) => {
    ws.addEventListener('message', (e) => {
      if (move && ws === move.old) {
        if (typeof e.data === 'string') {
          move.drained = true;
          return finish();
        }
        return move.next ? move.next.send(e.data) : move.bounced.push(e.data);
      }
      if (typeof e.data !== 'string') return server.send(e.data);
      if (move)
        move.again = e.data; // moved on again before the move settled
      else begin(e.data);
    });
    ws.addEventListener('close', (e) => {
      if (move && ws === move.old) {
        move.drained = true;
        return finish();
      }
      if (ws === up || ws === move?.next) closeAll(...clientClose(e));
    });
  };
  const begin = (ticket) => {
    move = { old: up, next: null, bounced: [], drained: false, again: null };
    try {
      up.send(DRAINED);
    } catch {
      move.drained = true; // the old object is already gone: nothing more can come from it
    }
    upstream(env, JSON.parse(ticket).robotId, role, true).then(
      (next) => {
        next.send(ticket);
        for (const d of move.bounced) next.send(d);
        move.bounced = [];
        move.next = next;
        attach(next);
        finish();
      },
      (e) => closeAll(1011, String(e.message).slice(0, 100)),
    );
  };
  server.addEventListener('message', (e) => fromClient(e.data));
  server.addEventListener('close', () => closeAll(1000, 'client gone'));
  server.addEventListener('error', () => closeAll(1000, 'client gone'));
  upstream(env, null, role, false).then(
    (ws) => {
      up = ws;
      attach(ws);
      for (const d of waiting.splice(0)) up.send(d);
    },
    (e) => closeAll(1011, String(e.message).slice(0, 100)),
  );
  return new Response(null, { status: 101, webSocket: client });
}

// The close a client sees when its object's socket closed: codes a peer may not send (no status,
// abnormal closure) become "service restart", which every client treats as "reconnect".
function clientClose(e) {
  if (e.code === 1005) return [1000, e.reason];
  if (e.code === 1006 || e.code === 1015) return [1012, 'the relay object restarted: reconnect'];
  return [e.code, e.reason];
}

function routePerRobot(request, env, url) {
  const robot = url.searchParams.get('robot');
  if (url.pathname === '/ws/robot' || url.pathname === '/ws/viewer') {
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
      return new Response(
        `${url.pathname} is a WebSocket endpoint: connect with a WebSocket client\n`,
        { status: 426 },
      );
    }
    return switchboard(request, env, url.pathname.slice('/ws/'.length));
  }
  // /api/stats is the directory's (the fleet's robots); ?robot=<id> is that robot's object's.
  const path = url.pathname.startsWith('/__test/') ? url.pathname : '/api/stats';
  return toObject(env, robot, path);
}

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
  // /__test/cockpit: the object's alarm counters; /__test/cockpit/evict resets the object.
  const testPath = url.pathname.startsWith('/__test/');
  if (isCockpitPath(url.pathname) && (!testPath || env.TETHER_TEST_HOOKS === '1')) {
    if (!env.COCKPIT) {
      return new Response(
        'the COCKPIT Durable Object binding is missing: add it to wrangler.toml\n',
        { status: 500 },
      );
    }
    if (perRobot(env)) return routePerRobot(request, env, url);
    // The object learns its part from these headers: a client's never reach it.
    const headers = new Headers(request.headers);
    for (const h of [PART, ROBOT, HANDOFF]) headers.delete(h);
    return env.COCKPIT.get(env.COCKPIT.idFromName(fleetName(env))).fetch(
      new Request(request, { headers }),
    );
  }
  return null;
}

const bytesOf = (data) =>
  typeof data === 'string' ? data : data instanceof Uint8Array ? data : new Uint8Array(data);

export class CockpitRelayObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
    this.ready = null;
    this.alarmFn = null; // the driver's timer while it is the object's alarm
    this.alarmsFired = 0;
  }

  async #init(request) {
    // The part this object serves comes with its first request (the Worker names it on every one).
    this.part = request.headers.get(PART) ?? 'whole';
    this.robot = request.headers.get(ROBOT) ?? '';
    const mod = await loadTetherModule({ wasmModule }, 'cockpit_relay');
    let rtc = null;
    if (this.env.COCKPIT_RTC) {
      const parsed = parseRtcFile(this.env.COCKPIT_RTC, { source: 'the COCKPIT_RTC secret' });
      if (!parsed.ok) {
        const { error } = /** @type {{error: string}} */ (parsed);
        this.failure =
          `${error} (put it on the cockpit relay Worker from a clone of tether: ` +
          '`make edge-secret NAME=COCKPIT_RTC CONFIG=web/edge/cockpit.wrangler.toml < rtc.json`)';
        return;
      }
      rtc = parsed.rtc;
      if (this.part !== 'whole') {
        this.failure =
          'COCKPIT_OBJECTS=per-robot does not broker WebRTC video yet (docs/cockpit-fleet.md): ' +
          'unset COCKPIT_OBJECTS or COCKPIT_RTC';
        return;
      }
    }
    const leaseGenFloor = (await this.ctx.storage.get(LEASE_GEN_KEY)) ?? 0;
    const started = Date.now();
    // COCKPIT_AUTH holds the relay's auth file (the same JSON as the Deno relay's --auth); empty
    // means open, as on a loopback relay. Set it with `make edge-secret NAME=COCKPIT_AUTH`.
    this.core = createCockpitRelay(mod, {
      authText: this.env.COCKPIT_AUTH ?? '',
      sfu: !!rtc,
      turn: !!rtc?.turnKeyId,
      wallClockMs: started,
      leaseGenFloor,
      webSocketBufferedAmount: false,
    });
    this.core.setFleetPart(this.part, this.robot);
    this.links = new Map(); // directory: link id -> the socket of a robot object
    this.nextLink = 0;
    this.link = null; // robot part: a promise of the socket to the directory
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
          if (a.kind === 'presence') return this.#toDirectory(a.bytes);
          if (a.kind === 'fleet_robots') {
            for (const ws of this.links.values()) ws.send(a.bytes);
            return;
          }
          if (a.kind === 'handoff') return this.#handOff(a);
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

  // The session moved (a ticket for the switchboard): its socket now only bounces what the
  // client sent after the move began, until the switchboard's DRAINED comes back round.
  #handOff(a) {
    const s = this.lane.sessions.get(a.session);
    if (!s) return;
    this.lane.sessions.delete(a.session);
    s.closed = true; // the core released it: the lane feeds nothing more in
    s.moved = true;
    s.ws.send(new TextDecoder().decode(a.bytes));
  }

  // Robot part: presence goes to the directory over one link, opened when first needed; the link
  // closing means the directory restarted (or this object is going away).
  #toDirectory(bytes) {
    this.link ??= (async () => {
      const res = await toObject(this.env, null, '/fleet/link', { upgrade: 'websocket' });
      const ws = res.webSocket;
      if (!ws) throw new Error(`the directory answered ${res.status}`);
      ws.accept();
      ws.addEventListener('message', (e) =>
        this.driver.input((now) => this.core.handleFleetRobots(bytesOf(e.data), now)),
      );
      const lost = () => {
        if (!this.link) return;
        this.link = null;
        this.driver.input((now) => this.core.handleDirectoryLost(now));
      };
      ws.addEventListener('close', lost);
      ws.addEventListener('error', lost);
      return ws;
    })();
    this.link.then(
      (ws) => {
        try {
          ws.send(bytes);
        } catch {} // closed meanwhile: its close handler reports the loss
      },
      () => {
        this.link = null;
        this.driver.input((now) => this.core.handleDirectoryLost(now));
      },
    );
  }

  // Directory: one robot object's link.
  #acceptLink() {
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    const id = ++this.nextLink;
    this.links.set(id, server);
    server.addEventListener('message', (e) =>
      this.driver.input((now) => this.core.handlePresence(id, bytesOf(e.data), now)),
    );
    const closed = () => {
      if (!this.links.delete(id)) return;
      this.driver.input((now) => this.core.handlePresence(id, 'null', now));
    };
    server.addEventListener('close', closed);
    server.addEventListener('error', closed);
    return new Response(null, { status: 101, webSocket: client });
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
    await (this.ready ??= this.#init(request));
    if (this.failure) return new Response(`${this.failure}\n`, { status: 500 });
    const url = new URL(request.url);
    if ((request.headers.get(PART) ?? 'whole') !== this.part)
      return new Response('a cockpit object serves one part of the fleet\n', { status: 500 });
    if (url.pathname === '/__test/cockpit/evict' && this.env.TETHER_TEST_HOOKS === '1') {
      this.ctx.abort('evicted by a test');
      return new Response('evicted\n');
    }
    if (url.pathname === '/fleet/link' && this.part === 'directory') return this.#acceptLink();
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
      const s = handlers.session;
      server.addEventListener('message', (e) => {
        if (s.moved) return server.send(e.data); // bounced to the switchboard (#handOff)
        // Text on a fleet object's socket is the switchboard's: a ticket (the core judges it).
        if (typeof e.data === 'string' && this.part !== 'whole')
          return this.driver.input((now) => this.core.handleHandoff(s.id, e.data, now));
        handlers.message(e.data);
      });
      server.addEventListener('close', () => handlers.closed());
      server.addEventListener('error', () => handlers.closed());
    }
    return new Response(null, { status: 101, webSocket: client });
  }
}
