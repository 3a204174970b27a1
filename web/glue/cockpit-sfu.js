// The SFU calls of the cockpit relay core (src/cockpit/rtc.hpp § WebRTC video), carried out for
// every host that runs it (the Deno relay, web/host/relay.js, and the edge Durable Object,
// web/edge/cockpit.js): an `sfu_call` action is one call of the Realtime client
// (web/sfu/client.js, `fetch` only), whose result goes back to the core with the action's token;
// an `sfu_cancel` aborts a call the core gave up on. The core decides every call, its retries and
// its deadline; this file only moves them.
const decoder = new TextDecoder();

/**
 * @param {import('./cockpit-relay.d.ts').CockpitRelay} core
 * @param {import('./driver.d.ts').Driver} driver the host's driver of `core`
 * @param {import('../sfu/client.d.ts').RealtimeClient} client
 */
export function createSfuCaller(core, driver, client) {
  const inFlight = new Map(); // call token -> AbortController

  function call(a) {
    const controller = new AbortController();
    inFlight.set(a.call, controller);
    let body;
    try {
      body = a.bytes?.length ? JSON.parse(decoder.decode(a.bytes)) : undefined;
    } catch {
      body = undefined; // the core writes JSON; the client then refuses the call as malformed
    }
    Promise.resolve()
      .then(() =>
        client.call({
          op: a.op,
          sessionId: a.sfuSession || undefined,
          body,
          signal: controller.signal,
        }),
      )
      .catch((e) => ({
        // The client returns values; a throw is a bug in the host, reported as such.
        ok: false,
        status: 0,
        errorCode: 'host_error',
        errorDescription: `the relay host failed to make the call: ${e?.message ?? e}`,
      }))
      .then((result) => {
        if (inFlight.get(a.call) !== controller) return; // cancelled
        inFlight.delete(a.call);
        driver.input((now) => core.handleSfuResult(a.call, result, now));
      });
  }

  return {
    /** Carries out an SFU action; false for any other action. */
    perform(a) {
      if (a.kind === 'sfu_call') {
        call(a);
        return true;
      }
      if (a.kind === 'sfu_cancel') {
        inFlight.get(a.call)?.abort();
        inFlight.delete(a.call);
        return true;
      }
      return false;
    },
    /** Calls still waiting for their answer. */
    get pending() {
      return inFlight.size;
    },
    /** Aborts every call (the host is stopping). */
    close() {
      for (const c of inFlight.values()) c.abort();
      inFlight.clear();
    },
  };
}
