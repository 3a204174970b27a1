// The explicit relay transport (agent-bus-and-swarm.md § Protocol: "an explicit transport carries
// the same room envelopes through a relay"): a PeerTransport (web/peer/transport.d.ts) that sends
// each control-lane message as the data of a room relay `signal` (room-relay.md § WebRTC
// signaling) over one WebSocket.
//
// The room member core (src/room/member.hpp, lanes mode) decides everything: the hello, the
// roster, which lanes are open (both of us members, the link up; a restarted peer's lane reset),
// the tagged frames ({k: 'tether-env', text}) that keep our envelopes apart from WebRTC signals,
// the size and backpressure refusals, and when to dial again (capped backoff with jitter; a
// refused hello stops it). This file owns the WebSocket and hands the core's events to
// subscribers. There is no binary lane: every signal is JSON text, so a raw frame would be base64
// inside JSON anyway, and swarm requests pick the base64 chunk path per request (hasBinary()).
//
// With options.secret (a room secret shared out of band) every envelope is sealed end to end
// (docs/agent-bus.md § Encrypted relay transport): the sealed channel core (src/room/sealed.hpp,
// web/glue/sealed.js) seals each text before the member carries it and opens each one the member
// hands up, refusing by name what is forged, replayed or reordered; the relay sees only
// ciphertext and routing. A lane that opens starts the channel's epoch handshake (greet), and the
// peer is reported open only once the channel is linked to it (it knows the peer's current
// epoch), so nothing is sealed to a restarted peer's old run and nothing a relay recorded before
// our own restart is taken. Without a secret the transport carries plaintext, and says so
// (`encrypted: false`).
//
// With options.transport 'http' the same frames travel over HTTP instead of a WebSocket (POST to
// send, a long-poll to receive; docs/agent-bus.md § HTTP relay transport), for places where a
// WebSocket cannot open: web/glue/http-member.js's link has a WebSocket's shape, so everything
// above, sealing included, runs unchanged over it.
import { createRoomMember, memberDefaults } from '../glue/room-member.js';
import { createSealer, sealedMaxPlaintext, sealedSecretError } from '../glue/sealed.js';
import { createHttpSocket } from '../glue/http-member.js';

const WS_OPEN = 1; // WebSocket.OPEN: the socket takes sends
const MAX_FAILURE_BODY = 2048; // of a refused upgrade's HTTP body, kept for onFailure
const AS_TEXT = Object.freeze({ binary: false }); // ws: send these bytes as a text frame

/**
 * @param {import('./relay-transport.d.ts').RelayTransportOptions} options
 * @returns {import('./relay-transport.d.ts').RelayTransport}
 */
export function createRelayTransport(options) {
  const o = { ...options };
  const url = String(o.url ?? '');
  const overHttp = o.transport === 'http';
  if (o.transport !== undefined && o.transport !== 'http' && o.transport !== 'websocket')
    throw new TypeError(
      `createRelayTransport: transport is 'websocket' (default) or 'http' (got '${o.transport}')`,
    );
  if (!(overHttp ? /^(wss?|https?):\/\// : /^wss?:\/\//).test(url))
    throw new TypeError(
      `createRelayTransport: url must be a ws:// or wss:// URL${overHttp ? ' (or http(s):// with transport http)' : ''} (got '${url}')`,
    );
  const WS = /** @type {new (url: string) => any} */ (
    overHttp
      ? function HttpLink(u) {
          return createHttpSocket(u, { fetch: o.fetch });
        }
      : (o.WebSocket ?? globalThis.WebSocket)
  );
  if (typeof WS !== 'function') {
    throw new TypeError(
      'createRelayTransport: no WebSocket here; pass options.WebSocket (e.g. `import WebSocket from "ws"`)',
    );
  }
  if (o.secret !== undefined && o.secret !== null) {
    const bad = sealedSecretError(o.secret);
    if (bad) throw new TypeError(`createRelayTransport: ${bad}`);
  }
  const subscribers = new Set();
  let ws = null;
  let closed = false;
  let sendFailed = false;
  let nodeWs = false; // the socket is Node's ws (EventEmitter API)
  let closing = null; // resolves when the socket we hung up has closed
  let reportFailure = null; // the current attempt's onFailure reporter
  let readyResolve, readyReject;
  const ready = new Promise((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  ready.catch(() => {});

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

  let member;
  try {
    member = createRoomMember(
      {
        room: o.room,
        selfId: o.selfId,
        writer: o.writer,
        policyVersion: o.policyVersion,
        lanes: true,
        maxMessageBytes: o.maxMessageBytes,
        maxFrameBytes: o.maxFrameBytes,
        maxBufferedBytes: o.maxBufferedBytes,
        reconnectMinMs: o.reconnectMinMs,
        reconnectMaxMs: o.reconnectMaxMs,
      },
      { dial, transmit, hangUp, event },
    );
  } catch (err) {
    throw new TypeError(`createRelayTransport: ${err.message}`);
  }
  const room = o.room;
  const laneBytes = o.maxMessageBytes ?? memberDefaults().maxMessageBytes;
  const maxBufferedBytes = o.maxBufferedBytes ?? memberDefaults().maxBufferedBytes;
  const encrypted = o.secret !== undefined && o.secret !== null;
  const maxMessageBytes = encrypted ? sealedMaxPlaintext(laneBytes) : laneBytes;
  let sealer = null; // the sealed channel, once its keys are derived
  const sealed = { refused: 0, unsent: 0, hellosUnsent: 0 };
  const sealerReady = encrypted
    ? createSealer(
        {
          room,
          selfId: o.selfId,
          secret: o.secret,
          maxLaneBytes: laneBytes,
          crypto: o.crypto,
        },
        {
          transmit(peer, frame, kind) {
            if (closed) return;
            const verdict =
              ws && ws.readyState === WS_OPEN
                ? member.sendText(peer, frame, ws.bufferedAmount)
                : 'not-open';
            if (verdict === 'accepted') return;
            // A handshake frame lost with its lane is sent again when the lane reopens (greet).
            if (kind !== 'text') {
              sealed.hellosUnsent++;
              return;
            }
            // The lane closed (or filled) while the frame was being sealed: it is lost, and said so.
            sealed.unsent++;
            o.onError?.(
              new Error(
                `relay transport for room '${room}': a sealed envelope to '${peer}' was not sent (${verdict}) because the lane changed while it was being encrypted`,
              ),
            );
          },
          text: (peer, text) => emit('text', peer, text),
          // The handshake with peer is done: sends to it are sealed to its current epoch.
          linked(peer) {
            if (!closed && member.laneOpen(peer)) emit('open', peer);
          },
          refused(err) {
            sealed.refused++;
            o.onError?.(err);
          },
        },
      ).then((s) => {
        if (closed) s.close();
        else sealer = s;
      })
    : Promise.resolve();
  sealerReady.catch(() => {}); // reported below, through ready and onError

  function event(e) {
    switch (e.kind) {
      case 'joined':
        if (e.reconnect) emit('reconnect');
        readyResolve();
        return;
      case 'roster':
        emit('roster', e.members);
        return;
      case 'lane-open':
        // Encrypted: open once the sealed channel is linked to the peer (sealer.linked above).
        if (encrypted) sealer?.greet(e.origin);
        else emit('open', e.origin);
        return;
      case 'lane-close':
        emit('close', e.origin);
        return;
      case 'text':
        if (sealer) sealer.open(e.origin, e.text);
        else if (!encrypted) emit('text', e.origin, e.text);
        return;
      case 'refused': {
        const err = new Error(`relay transport for room '${room}': ${e.text}`);
        if (e.fatal) {
          reportFailure?.({ stage: 'rejected', reason: e.reason, message: e.text });
          readyReject(err);
        }
        o.onError?.(err);
        return;
      }
    }
  }

  function transmit(frame) {
    try {
      // Node's ws sends bytes as a text frame without re-encoding a string (copied out of WASM
      // memory: the socket may queue it); a browser needs text.
      if (nodeWs) ws.send(Buffer.from(frame.view()), AS_TEXT);
      else ws.send(frame.text());
    } catch {
      sendFailed = true;
    }
  }

  function hangUp() {
    const sock = ws;
    ws = null;
    if (!sock || sock.readyState > WS_OPEN) return;
    closing = new Promise((resolve) => {
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

  function dial(attempt) {
    if (closed) return;
    let sock;
    try {
      sock = new WS(url);
    } catch (err) {
      o.onError?.(err);
      member.linkClosed();
      return;
    }
    ws = sock;
    nodeWs = typeof sock.on === 'function';
    // What the relay actually answered when this attempt does not reach the room, for
    // options.onFailure (reported once per attempt; the reconnect schedule is the core's).
    let opened = false;
    let reported = false;
    const report = (failure) => {
      if (reported || ws !== sock) return;
      reported = true;
      o.onFailure?.({ attempt, ...failure });
    };
    reportFailure = report;
    const onOpen = () => {
      if (ws !== sock) return;
      opened = true;
      member.linkOpen();
    };
    const onMessage = (data) => {
      if (ws === sock) member.linkMessage(data);
    };
    const onClose = (code, reason) => {
      if (ws !== sock) return;
      if (!member.joined()) {
        const why = reason ? String(reason) : '';
        report(
          opened
            ? { stage: 'closed', code, reason: why }
            : overHttp && code >= 400 && code < 600
              ? // The HTTP link's open was refused: its status and body, as a refused upgrade's.
                { stage: 'upgrade', status: code, body: why, retryAfter: null }
              : overHttp
                ? { stage: 'connect', code: null, message: why || 'the HTTP link did not open' }
                : // A browser WebSocket says nothing about a failed upgrade.
                  {
                    stage: 'connect',
                    code: null,
                    message: 'the WebSocket closed before it opened',
                  },
        );
      }
      ws = null;
      member.linkClosed();
    };
    if (nodeWs) {
      // Node `ws`: its EventEmitter API hands text frames as Buffers (they go in as bytes).
      sock.on('open', onOpen);
      sock.on('message', onMessage);
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
      sock.addEventListener('message', (ev) => onMessage(ev.data));
      sock.addEventListener('close', (ev) => onClose(ev?.code, ev?.reason));
      sock.addEventListener('error', () => {});
    }
  }

  // Encrypted: nobody is met before our keys are derived, so no plaintext can slip out first.
  sealerReady.then(
    () => {
      if (!closed) member.start();
    },
    (err) => {
      const e = new Error(`relay transport for room '${room}': ${err.message}`);
      readyReject(e);
      o.onError?.(e);
    },
  );

  /** @type {any} */
  const stats = {}; // live getters over the member's and the sealer's counters
  for (const k of ['reconnects', 'sent', 'received', 'refused', 'ignored']) {
    Object.defineProperty(stats, k, { enumerable: true, get: () => member.stats()[k] });
  }
  Object.defineProperty(stats, 'sealed', {
    enumerable: true,
    get: () =>
      sealer
        ? {
            ...sealer.stats(),
            ...sealed,
            // Lanes open whose epoch handshake has not finished (a relay withholding it stalls
            // them here: nothing is sent to them, and nothing unsealed either).
            awaiting: member.joined()
              ? member.roster().filter((p) => member.laneOpen(p) && !sealer.linked(p))
              : [],
          }
        : null,
  });

  return {
    selfId: o.selfId,
    room,
    ready,
    stats,
    /** Whether envelopes are sealed end to end with a room secret (else the relay reads them). */
    encrypted,
    /** How frames reach the relay: 'websocket', or 'http' (POST and long-poll). */
    transport: overHttp ? 'http' : 'websocket',
    isConnected: () => member.joined(),
    roster: () => member.roster(),
    openPeers: () =>
      !member.joined()
        ? []
        : encrypted
          ? member.roster().filter((p) => member.laneOpen(p) && sealer?.linked(p))
          : member.roster(),
    send(peer, text) {
      // A socket that is not open (closing, say) takes nothing: the caller keeps the message.
      if (typeof text !== 'string' || closed || !ws || ws.readyState !== WS_OPEN) return false;
      if (encrypted) {
        // The lane must be open now; the member takes the sealed frame once it is encrypted.
        if (!sealer || !member.laneOpen(peer) || ws.bufferedAmount > maxBufferedBytes) return false;
        return sealer.seal(peer, text) === 'none';
      }
      sendFailed = false;
      return member.sendText(peer, text, ws.bufferedAmount) === 'accepted' && !sendFailed;
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
      return maxMessageBytes;
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
      readyReject(new Error(`relay transport for room '${room}' was closed before it joined`));
      member.close();
      sealer?.close();
      await closing;
    },
  };
}
