// `tether/relay-cockpit`: the cockpit relay core (src/relay/cockpit_relay.hpp) for JavaScript hosts.
// A thin wrapper: it moves bytes into WASM memory and turns the core's actions into plain objects
// whose bytes are copied out once per distinct buffer (one frame fanned out to many viewers is one
// copy). Every protocol decision is the core's (DESIGN.md rule 4); the host only carries actions out.
import { loadTetherModule } from './load.js';

/**
 * Loads the module and makes a relay core.
 * @param {{authText?: string, sfu?: boolean, wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 */
export async function loadCockpitRelay(options = {}) {
  return createCockpitRelay(await loadTetherModule(options), options);
}

/** Wraps a loaded module. Throws when the auth file is invalid, with the entry at fault. */
export function createCockpitRelay(mod, { authText = '', sfu = false } = {}) {
  const core = new mod.CockpitRelayCore(authText, sfu);
  const problem = core.error();
  if (problem) {
    core.delete();
    throw new Error(`tether relay: the auth file is invalid: ${problem}`);
  }
  const limits = mod.cockpitLimits();

  const stage = (bytes) => {
    core.input(bytes.length).set(bytes);
    return bytes.length;
  };

  return {
    limits,
    /** @param {'robot'|'viewer'} role @param {'webtransport'|'websocket'} lane @returns {number} 0 when full */
    openSession: (role, lane, now) => core.openSession(role, lane, now),
    sessionClosed: (session, now) => core.sessionClosed(session, now),
    controlData: (session, bytes, now) => core.controlData(session, stage(bytes), now),
    datagram: (session, bytes, now) => core.datagram(session, stage(bytes), now),
    /** @returns {number} a stream id, or 0 when the session may open no more */
    incomingOpen: (session, now) => core.incomingOpen(session, now),
    incomingData: (stream, bytes, now) => core.incomingData(stream, stage(bytes), now),
    incomingEnd: (stream, now) => core.incomingEnd(stream, now),
    wsMessage: (session, bytes, now) => core.wsMessage(session, stage(bytes), now),
    streamOpened: (stream, now) => core.streamOpened(stream, now),
    writeDone: (stream, now) => core.writeDone(stream, now),
    streamFailed: (stream, now) => core.streamFailed(stream, now),
    carrierFailed: (session, now) => core.carrierFailed(session, now),
    tick: (now) => core.tick(now),
    /** The actions to carry out, in order; each with `bytes` (a Uint8Array) where it has any. */
    takeActions() {
      const actions = core.takeActions();
      const copies = [];
      for (const a of actions) {
        if (a.buf >= 0) a.bytes = copies[a.buf] ??= core.buffer(a.buf).slice();
        delete a.buf;
      }
      return actions;
    },
    /** GET /api/stats */
    stats: () => JSON.parse(core.stats()),
    sessionCount: () => core.sessionCount(),
    dispose: () => core.delete(),
  };
}
