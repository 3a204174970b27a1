// The WebSocket lane of the cockpit relay (cockpit-wire-v7-notes.md § Endpoints: every message is
// one binary data frame), shared by every host that serves /ws/robot and /ws/viewer: the Deno relay
// (web/host/relay.js) and the edge Durable Object (web/edge/cockpit.js). The core decides; this
// carries its actions out on WebSocket-shaped objects (send, bufferedAmount, readyState, close) and
// feeds what the sockets report back in through the host's driver (web/glue/driver.js).

const OPEN = 1; // WebSocket.OPEN, the same number in every runtime
const DRAIN_POLL_MS = 10; // how often a full socket is checked for room (no drain event exists)

// workerd has no `bufferedAmount` on server WebSockets (cloudflare/workerd#988): there the lane
// reports every write done at once and the core, made with webSocketBufferedAmount: false, paces
// the socket itself by the pongs its client has acknowledged (the edge's slow-reader rule). Deno
// and browsers report it, and the lane waits for the socket to drain.
const buffered = (ws) => ws.bufferedAmount ?? 0;

/**
 * One socket's session. `waiting`: its completions (stream, opened) held until the socket has
 * room, in order; `poll`: the one timer that looks for room meanwhile; `moved`: the edge's mark
 * of a session handed to another object (web/edge/cockpit.js).
 * @typedef {{id: number, role: string, ws: any, out: Set<number>, closed: boolean,
 *   waiting: Array<[number, boolean]>, poll: any, moved?: boolean}} LaneSession
 */

/**
 * @param {import('./cockpit-relay.d.ts').CockpitRelay} core
 * @param {import('./driver.d.ts').Driver} driver  the host's driver of `core`
 * @param {{highWater?: number}} [options]  `highWater` bounds what one socket buffers for a viewer
 *   before latest frames are superseded in place by the core (the core's own bound by default).
 */
export function createWsLane(
  core,
  driver,
  { highWater = core.limits.webSocketHighWaterBytes } = {},
) {
  const sessions = new Map(); // session id -> lane session

  // Completions are reported per turn, not per completion (bench/README.md § cockpit fan-out):
  // every stream open and write done that becomes known while one microtask checkpoint runs goes
  // into one driver input, one handleStreamOpened and one counted handleWritesDone per stream, in
  // the order the streams first completed. A robot frame fanned out to 8 viewers is then one input
  // for its 8 completions instead of 8, each with its own drain. A stream's open is reported
  // before its writes (a write is only ever handed out after its stream opened).
  /** @type {Map<number, {s: LaneSession, opened: boolean, written: number}>} stream -> this turn's completions */
  const turn = new Map();
  let flushing = false;
  function complete(s, stream, opened) {
    let c = turn.get(stream);
    if (!c) turn.set(stream, (c = { s, opened: false, written: 0 }));
    if (opened) c.opened = true;
    else c.written++;
    if (!flushing) {
      flushing = true;
      queueMicrotask(flush);
    }
  }
  function flush() {
    flushing = false;
    if (turn.size === 0) return;
    const done = [...turn];
    turn.clear();
    driver.input((now) => {
      for (const [stream, c] of done) {
        // A stream reset while it waited for room is not reported open (the core dropped it).
        if (c.opened && c.s.out.has(stream)) core.handleStreamOpened(stream, now);
        if (c.written > 0) core.handleWritesDone(stream, c.written, now);
      }
    });
  }

  // A completion is a transport fact: the socket has room (at most highWater buffered). While it
  // has none, the session's completions wait in order and one timer per session polls for room;
  // once it has room every waiting completion is done at once, as each would have been.
  function whenDrained(s, stream, opened) {
    if (s.waiting.length === 0 && buffered(s.ws) <= highWater) return complete(s, stream, opened);
    s.waiting.push([stream, opened]);
    if (buffered(s.ws) <= highWater) return release(s);
    if (s.poll) return;
    s.poll = setInterval(() => {
      if (s.closed) {
        clearInterval(s.poll);
        s.poll = null;
        s.waiting.length = 0;
        return;
      }
      if (buffered(s.ws) <= highWater) release(s);
    }, DRAIN_POLL_MS);
  }
  function release(s) {
    if (s.poll) clearInterval(s.poll);
    s.poll = null;
    const waiting = s.waiting;
    s.waiting = [];
    for (const [stream, opened] of waiting) complete(s, stream, opened);
  }

  return {
    sessions,

    /**
     * Opens a core session for a socket that is already open. Returns the handlers the host wires
     * to the socket's events, or null when the relay is full (the socket is then closed 1013).
     */
    accept(ws, role) {
      const id = driver.input((now) => core.handleSessionOpen(role, 'websocket', now));
      if (!id) {
        ws.close(1013, 'relay full: try again later');
        return null;
      }
      /** @type {LaneSession} */
      const s = { id, role, ws, out: new Set(), closed: false, waiting: [], poll: null };
      sessions.set(id, s);
      return {
        session: s,
        message(data) {
          if (s.closed) return;
          // Text messages are not frames: the core would refuse them anyway, so drop them here.
          if (typeof data === 'string') return;
          const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
          driver.input((now) => core.handleWsMessage(id, bytes, now));
        },
        closed() {
          if (s.closed) return;
          s.closed = true;
          sessions.delete(id);
          driver.input((now) => core.handleSessionClosed(id, now));
        },
      };
    },

    /** Carries out one core action for a session of this lane. */
    perform(s, a) {
      const ws = s.ws;
      const send = (bytes) => {
        if (ws.readyState === OPEN) ws.send(bytes);
      };
      switch (a.kind) {
        case 'send_datagram':
        case 'write_control':
          send(a.bytes);
          return;
        case 'open_carrier':
          return; // the socket is the carrier
        case 'open_stream':
          // A stream "opens" once the socket has drained below the high-water mark, so latest
          // frames held meanwhile are superseded in place by the core (latest = newest pending).
          s.out.add(a.stream);
          whenDrained(s, a.stream, true);
          return;
        case 'write_carrier':
        case 'write_stream':
          send(a.bytes);
          // A write completes when the socket drains, so the core's caps bound what it buffers.
          whenDrained(s, a.stream, false);
          return;
        case 'reset_stream':
          s.out.delete(a.stream);
          return;
        case 'close_session':
          s.closed = true;
          sessions.delete(s.id);
          try {
            ws.close(a.code ? 4000 : 1000, (a.reason ?? '').slice(0, 100));
          } catch {}
          return;
      }
    },
  };
}
