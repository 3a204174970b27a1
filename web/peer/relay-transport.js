// The explicit relay transport (agent-bus-and-swarm.md § Protocol: "an explicit transport carries
// the same room envelopes through a relay"): a PeerTransport (web/peer/transport.d.ts) that sends
// each control-lane message as the data of a room relay `signal` (room-relay.md § WebRTC
// signaling) over one WebSocket. The room's `members` are the roster; a peer's lane is "open"
// while both of us are members and our socket is up. It reconnects with capped backoff.
//
// The relay routes signals by origin and inspects no payloads, so our data is tagged
// ({k: 'tether-env', text}) to stay apart from WebRTC offer/answer/ICE signals in the same room.
// There is no binary lane: every signal is JSON text, so a raw frame would be base64 inside
// JSON anyway, and swarm requests pick the base64 chunk path per request (hasBinary() false).

const SIGNAL_KIND = 'tether-env';
const MAX_FAILURE_BODY = 2048; // of a refused upgrade's HTTP body, kept for onFailure
const DEFAULTS = Object.freeze({
  proto: 3, // MESH_PROTO_VERSION of tether/relay (kept literal so this file loads no WASM)
  policyVersion: 1,
  // The same bound a data channel gives a single message (TOOLCHAIN.md: sctp maxMessageSize).
  maxMessageBytes: 256 * 1024,
  // Above this many bytes queued on the socket, send() refuses: the caller keeps the message.
  maxBufferedBytes: 4 * 1024 * 1024,
  // One relay frame (the loopback and host relays accept 1 MiB).
  maxFrameBytes: 1024 * 1024,
  reconnectMinMs: 250,
  reconnectMaxMs: 10_000,
  // The relay accepts ids up to 512 bytes; envelopes bound streamId at 128 (agent-bus-notes.md).
  maxIdBytes: 128,
});

function positiveInt(name, v, min, max) {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(
      `createRelayTransport: ${name} must be an integer from ${min} to ${max} (got ${String(v)})`,
    );
  }
  return v;
}

function cleanId(name, v, maxBytes) {
  if (
    typeof v !== 'string' ||
    v.length === 0 ||
    Buffer.byteLength(v) > maxBytes ||
    /[\u0000-\u001f\u007f]/.test(v)
  ) {
    throw new TypeError(
      `createRelayTransport: ${name} must be a non-empty string of at most ${maxBytes} bytes without control characters`,
    );
  }
  return v;
}

/**
 * @param {import('./relay-transport.d.ts').RelayTransportOptions} options
 * @returns {import('./relay-transport.d.ts').RelayTransport}
 */
export function createRelayTransport(options) {
  const o = { ...DEFAULTS, ...options };
  const url = String(o.url ?? '');
  if (!/^wss?:\/\//.test(url))
    throw new TypeError(`createRelayTransport: url must be a ws:// or wss:// URL (got '${url}')`);
  const room = cleanId('room', o.room, 512);
  const selfId = cleanId('selfId', o.selfId, o.maxIdBytes);
  positiveInt('maxMessageBytes', o.maxMessageBytes, 1, 1 << 20);
  positiveInt('maxBufferedBytes', o.maxBufferedBytes, 1, 1 << 30);
  positiveInt('maxFrameBytes', o.maxFrameBytes, 64, 1 << 26);
  positiveInt('reconnectMinMs', o.reconnectMinMs, 1, 600_000);
  positiveInt('reconnectMaxMs', o.reconnectMaxMs, o.reconnectMinMs, 3_600_000);
  const WS = o.WebSocket ?? globalThis.WebSocket;
  if (typeof WS !== 'function') {
    throw new TypeError(
      'createRelayTransport: no WebSocket here; pass options.WebSocket (e.g. `import WebSocket from "ws"`)',
    );
  }

  const subscribers = new Set();
  const roster = new Set(); // every other member of the room
  let ws = null;
  let joined = false; // welcome received on the current socket
  let everJoined = false;
  let closed = false;
  let fatal = null; // the relay refused our hello: no more reconnects
  let attempt = 0;
  let timer = null;
  let reportFailure = null; // the current attempt's onFailure reporter
  let readyResolve, readyReject;
  const ready = new Promise((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  ready.catch(() => {});
  const stats = { reconnects: 0, sent: 0, received: 0, refused: 0, ignored: 0 };

  const emit = (name, ...args) => {
    for (const h of [...subscribers]) {
      const f = h[name];
      if (typeof f !== 'function') continue;
      try {
        f(...args);
      } catch (err) {
        // A handler's bug must not break the transport or the other subscribers.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  };
  const emitRoster = () => emit('roster', [...roster]);

  function lostLink() {
    const wasJoined = joined;
    joined = false;
    if (wasJoined) for (const p of roster) emit('close', p);
  }

  function onServer(msg) {
    if (!msg || typeof msg !== 'object' || msg.room !== room) return;
    switch (msg.t) {
      case 'welcome': {
        const members = Array.isArray(msg.members)
          ? msg.members.filter((m) => typeof m === 'string' && m !== selfId)
          : [];
        const before = new Set(roster);
        roster.clear();
        for (const m of members) roster.add(m);
        joined = true;
        attempt = 0;
        if (everJoined) {
          stats.reconnects++;
          emit('reconnect');
        }
        everJoined = true;
        for (const p of before) if (!roster.has(p)) emit('close', p);
        emitRoster();
        for (const p of roster) emit('open', p);
        readyResolve();
        return;
      }
      case 'member': {
        if (typeof msg.origin !== 'string' || msg.origin === selfId) return;
        if (msg.gone) {
          if (!roster.delete(msg.origin)) return;
          if (joined) emit('close', msg.origin);
          emitRoster();
          return;
        }
        // A known origin joining again is a restarted peer that displaced its old connection:
        // its lane was reset, so say so before reopening it (queues flush again on open).
        if (roster.has(msg.origin)) {
          if (joined) emit('close', msg.origin);
        } else {
          roster.add(msg.origin);
          emitRoster();
        }
        if (joined) emit('open', msg.origin);
        return;
      }
      case 'signal': {
        const d = msg.data;
        if (
          typeof msg.from !== 'string' ||
          !d ||
          d.k !== SIGNAL_KIND ||
          typeof d.text !== 'string'
        ) {
          stats.ignored++; // somebody else's signaling (WebRTC offers etc.): not ours
          return;
        }
        if (d.text.length > o.maxMessageBytes) {
          stats.ignored++;
          return;
        }
        stats.received++;
        emit('text', msg.from, d.text);
        return;
      }
      case 'reject':
      case 'eject': {
        const why =
          msg.t === 'reject'
            ? `the relay rejected our hello (${msg.reason}${msg.expected !== undefined ? `, expected ${msg.expected}` : ''}); check the proto/policyVersion options against the relay`
            : `the relay ejected us (${msg.reason})`;
        const err = new Error(`relay transport for room '${room}': ${why}`);
        // A refused hello will be refused again: stop instead of hammering the relay.
        if (msg.t === 'reject') {
          reportFailure?.({ stage: 'rejected', reason: String(msg.reason), message: why });
          fatal = err;
          if (timer) clearTimeout(timer);
          timer = null;
        }
        if (!everJoined) readyReject(err);
        o.onError?.(err);
        return;
      }
      default:
        return; // env, presence, settled, drop: room document traffic, not ours
    }
  }

  function connect() {
    timer = null;
    if (closed) return;
    let sock;
    try {
      sock = new WS(url);
    } catch (err) {
      o.onError?.(err);
      schedule();
      return;
    }
    ws = sock;
    // What the relay actually answered when this attempt does not reach the room, for
    // options.onFailure (reported once per attempt; the reconnect schedule is unchanged).
    let opened = false;
    let reported = false;
    const report = (failure) => {
      if (reported || ws !== sock) return;
      reported = true;
      o.onFailure?.({ attempt: attempt + 1, ...failure });
    };
    reportFailure = report;
    const onOpen = () => {
      if (ws !== sock) return;
      opened = true;
      sock.send(
        JSON.stringify({
          t: 'hello',
          room,
          origin: selfId,
          proto: o.proto,
          policyVersion: o.policyVersion,
        }),
      );
    };
    const onMessage = (ev) => {
      if (ws !== sock) return;
      const data = ev && typeof ev === 'object' && 'data' in ev ? ev.data : ev;
      let msg;
      try {
        msg = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
      } catch {
        return;
      }
      onServer(msg);
    };
    const onClose = (code, reason) => {
      if (ws !== sock) return;
      if (!joined) {
        const why = reason ? String(reason) : '';
        report(
          opened
            ? { stage: 'closed', code, reason: why }
            : // A browser WebSocket says nothing about a failed upgrade.
              { stage: 'connect', code: null, message: 'the WebSocket closed before it opened' },
        );
      }
      ws = null;
      lostLink();
      schedule();
    };
    if (typeof sock.on === 'function') {
      // Node `ws`: its EventEmitter API hands text frames as Buffers.
      sock.on('open', onOpen);
      sock.on('message', (data) => onMessage(data));
      sock.on('close', onClose);
      // 'close' follows an error and drives the reconnect; the error says why we never opened
      // (ECONNREFUSED, ENOTFOUND, a TLS code such as DEPTH_ZERO_SELF_SIGNED_CERT).
      sock.on('error', (err) => {
        if (!opened)
          report({
            stage: 'connect',
            code: err?.code ?? null,
            message: String(err?.message ?? err),
          });
      });
      // The relay answered the upgrade with HTTP (404 wrong path, 401 bad ticket, 429, 503):
      // keep its status and the start of its body, then end the attempt as ws would.
      sock.on('unexpected-response', (req, res) => {
        const chunks = [];
        let size = 0;
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          clearTimeout(t);
          report({
            stage: 'upgrade',
            status: res.statusCode,
            body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_FAILURE_BODY),
            retryAfter: res.headers?.['retry-after'] ?? null,
          });
          sock.terminate();
        };
        const t = setTimeout(finish, 1000);
        t.unref?.();
        res.on('data', (c) => {
          if (size < MAX_FAILURE_BODY) chunks.push(c);
          size += c.length;
          if (size >= MAX_FAILURE_BODY) finish();
        });
        res.on('end', finish);
        res.on('error', finish);
      });
    } else {
      sock.addEventListener('open', onOpen);
      sock.addEventListener('message', onMessage);
      sock.addEventListener('close', (ev) => onClose(ev?.code, ev?.reason));
      sock.addEventListener('error', () => {});
    }
  }

  function schedule() {
    if (closed || fatal || timer) return;
    const base = Math.min(o.reconnectMaxMs, o.reconnectMinMs * 2 ** Math.min(attempt, 20));
    attempt++;
    // Jitter in [base/2, base]: peers dropped together don't all come back in one burst.
    const delay = Math.max(1, Math.round(base / 2 + (Math.random() * base) / 2));
    timer = setTimeout(connect, delay);
    timer.unref?.();
  }

  function canSend(peer) {
    return joined && ws && ws.readyState === 1 && roster.has(peer) && !closed;
  }

  connect();

  return {
    selfId,
    room,
    ready,
    stats,
    isConnected: () => joined,
    roster: () => [...roster],
    openPeers: () => (joined ? [...roster] : []),
    send(peer, text) {
      if (typeof text !== 'string' || !canSend(peer)) return false;
      if (Buffer.byteLength(text) > o.maxMessageBytes || ws.bufferedAmount > o.maxBufferedBytes) {
        stats.refused++;
        return false;
      }
      const frame = JSON.stringify({ t: 'signal', room, to: peer, data: { k: SIGNAL_KIND, text } });
      // Escaping can grow the frame past what the relay accepts (its maxPayload): refuse, don't lose.
      if (Buffer.byteLength(frame) > o.maxFrameBytes) {
        stats.refused++;
        return false;
      }
      try {
        ws.send(frame);
      } catch {
        return false;
      }
      stats.sent++;
      return true;
    },
    sendBinary() {
      return false;
    },
    bufferedAmount() {
      return ws ? ws.bufferedAmount : 0;
    },
    hasBinary() {
      return false;
    },
    /** The largest control message send() takes (the swarm glue sizes base64 chunks by it). */
    maxMessageSize() {
      return o.maxMessageBytes;
    },
    subscribe(handlers) {
      const h = { ...handlers };
      subscribers.add(h);
      return () => subscribers.delete(h);
    },
    /** Drops the socket as an outage would (tests, and a caller that knows the link is dead). */
    dropLink() {
      if (ws) ws.close();
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      readyReject(new Error(`relay transport for room '${room}' was closed before it joined`));
      const sock = ws;
      lostLink();
      ws = null;
      roster.clear();
      if (sock && sock.readyState <= 1) {
        await new Promise((resolve) => {
          const done = () => resolve();
          if (typeof sock.once === 'function') sock.once('close', done);
          else sock.addEventListener('close', done);
          const t = setTimeout(done, 2000);
          t.unref?.();
          try {
            sock.close();
          } catch {
            resolve();
          }
        });
      }
    },
  };
}
