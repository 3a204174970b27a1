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
// The one thing kept in storage is the newest teleop lease generation (persist_lease_gen): a
// robot keeps its generation floor across the eviction, so the next object starts above it
// whatever machine's clock it runs on. The put is not awaited on purpose: the object's output
// gate holds every message sent after it until it is durable, so no robot ever sees a generation
// that could be lost.
//
// workerd's WebSockets have no bufferedAmount (cloudflare/workerd#988), so the core paces them
// itself by acknowledged pongs (webSocketBufferedAmount: false; the edge's slow-reader rule,
// docs/cockpit-protocol.md § The slow-reader rule on a WebSocket).
import wasmModule from '../../build/wasm/tether-edge.wasm';
import '../glue/modules/tether-edge.js';
import { loadTetherModule } from '../glue/load.js';
import { createCockpitRelay } from '../glue/cockpit-relay.js';
import { createWsLane } from '../glue/cockpit-ws-lane.js';
import { createDriver } from '../glue/driver.js';

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
  if (
    url.pathname === '/api/stats' ||
    url.pathname === '/ws/robot' ||
    url.pathname === '/ws/viewer'
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
  }

  async #init() {
    const mod = await loadTetherModule({ wasmModule }, 'cockpit');
    const leaseGenFloor = (await this.ctx.storage.get(LEASE_GEN_KEY)) ?? 0;
    const started = Date.now();
    // COCKPIT_AUTH holds the relay's auth file (the same JSON as the Deno relay's --auth); empty
    // means open, as on a loopback relay. Set it with `wrangler secret put COCKPIT_AUTH`.
    this.core = createCockpitRelay(mod, {
      authText: this.env.COCKPIT_AUTH ?? '',
      wallClockMs: started,
      leaseGenFloor,
      webSocketBufferedAmount: false,
    });
    // The driver's one timer holds the core's reap and publish deadlines; with nobody connected
    // there are none, so an idle object keeps no timer.
    this.driver = createDriver(
      this.core,
      {
        perform: (a) => {
          if (a.kind === 'persist_lease_gen') {
            this.ctx.storage.put(LEASE_GEN_KEY, a.gen);
            return;
          }
          const s = this.lane.sessions.get(a.session);
          if (s) this.lane.perform(s, a);
        },
      },
      { now: () => Date.now() - started },
    );
    this.lane = createWsLane(this.core, this.driver);
  }

  async fetch(request) {
    await (this.ready ??= this.#init());
    const url = new URL(request.url);
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
