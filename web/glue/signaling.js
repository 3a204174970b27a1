// The signaling negotiation for JavaScript (src/bus/signaling.hpp): who offers, generations,
// renegotiation, glare, rebuilds. The core decides; this file runs it through the one driver
// (web/glue/driver.js), hands its actions (create / offer / answer / accept a connection, add a
// candidate, close, signal) to the caller's host and its events (open, close, roster, reconnect,
// signaling down) to the caller (docs/design.md rule 4). Used by web/peer/webrtc-transport.js.
import { createDriver } from './driver.js';
import { loadTetherModule, loadedTetherModule } from './load.js';
import { randomSeed } from './seed.js';

// Node and Deno load the module on import; a browser app loads it through any tether loader first
// (web/glue/room-member.js says why).
let mod = null;
let limits = null;
function adopt(m) {
  mod = m;
  limits = Object.freeze({ ...m.signalingLimits() });
}
if (globalThis.process?.versions?.node || globalThis.Deno)
  adopt(await loadTetherModule({}, 'signaling'));
function ready() {
  if (!mod) {
    const m = loadedTetherModule('signaling');
    if (!m) {
      throw new Error(
        'tether/peer: the WASM module is not loaded; `await initPeer({ wasmModule })` (or any tether loader) first',
      );
    }
    adopt(m);
  }
  return mod;
}

/** The core's bounds (openTimeoutMs, channel ids and labels, buffer bounds, ...). */
export function signalingLimits() {
  ready();
  return limits;
}

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((core) => core.delete())
    : null;

/**
 * @param {{selfId: string, seed?: number, openTimeoutMs?: number}} options
 * @param {import('./signaling.d.ts').SignalingHost} host
 * @param {import('./driver.d.ts').DriverOptions} [driverOptions]
 * @returns {import('./signaling.d.ts').Signaling}
 */
export function createSignaling(options, host, driverOptions = {}) {
  const core = new (ready().SignalingCore)(
    String(options.selfId),
    options.seed ?? randomSeed(),
    options.openTimeoutMs ?? limits.openTimeoutMs,
  );
  const driver = createDriver(
    {
      pollAction: () => core.pollAction(),
      pollEvent: () => core.pollEvent(),
      pollTimeout: () => core.pollTimeout(),
      handleTimeout: (now) => core.timeout(now),
    },
    { perform: (a) => host.perform(a), event: (e) => host.event(e) },
    driverOptions,
  );
  const input = (fn) => driver.defer(fn);
  const s = {
    welcome: (members) => input((now) => core.welcome(members, now)),
    roster: (members) => input((now) => core.roster(members, now)),
    signalingDown: () => input((now) => core.signalingDown(now)),
    signal: (from, dataJson) => input((now) => core.signal(from, dataJson, now)),
    description: (peer, gen, sdp) => input((now) => core.description(peer, gen, sdp, now)),
    remoteSet: (peer, gen) => input((now) => core.remoteSet(peer, gen, now)),
    failed: (peer, gen) => input((now) => core.failed(peer, gen, now)),
    localCandidate: (peer, gen, c) =>
      input((now) =>
        core.localCandidate(peer, gen, c.candidate, c.sdpMid ?? null, c.sdpMLineIndex ?? null, now),
      ),
    channelsOpen: (peer, gen) => input((now) => core.channelsOpen(peer, gen, now)),
    channelClosed: (peer, gen) => input((now) => core.channelClosed(peer, gen, now)),
    connectionState: (peer, gen, state) =>
      input((now) => core.connectionState(peer, gen, String(state), now)),
    rebuild: (peer) => input((now) => core.rebuild(peer, now)),
    close() {
      input(() => core.close());
      driver.close();
    },
    /** When the core next wants the clock, or null. */
    nextTimeout: () => core.pollTimeout(),
    isOpen: (peer) => core.isOpen(peer),
    signalingUp: () => core.signalingUp(),
    stats: () => core.stats(),
  };
  registry?.register(s, core);
  return s;
}
