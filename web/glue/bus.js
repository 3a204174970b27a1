// `tether/bus`: the agent message bus for JavaScript (agent-bus-and-swarm.md § Delivery semantics).
// A thin wrapper over src/bus: it feeds transport events and received text into the core, offers
// the core's transmits to the transport one at a time (reporting the boolean send result back,
// which is what fixes the peerConnected-before-open race), hands the core's events to handlers,
// and keeps one timer for the core's next wake. It makes no protocol decisions (DESIGN.md rule 4).
import { loadTetherModule } from './load.js';
import { textBytes } from './text-bytes.js';

/**
 * Loads the bus core. In workerd pass { wasmModule } (the imported tether.wasm).
 * @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 */
export async function loadBus(options) {
  return createBusApi(await loadTetherModule(options, 'bus'));
}

/** Shorthand: loads the module (options.wasm) and creates one bus. */
export async function createBus(options) {
  return (await loadBus(options.wasm)).createBus(options);
}

const HANDLER_KEYS = ['message', 'rejected', 'handoff', 'handoffStored', 'handoffExpired', 'confirmation', 'peer'];

function randomSeed() {
  const w = new Uint32Array(2);
  globalThis.crypto.getRandomValues(w);
  return (w[0] & 0x1fffff) * 2 ** 32 + w[1]; // 53 bits: exact as a JS number
}

function json(value) {
  try {
    const t = JSON.stringify(value === undefined ? null : value);
    return t === undefined ? 'null' : t;
  } catch {
    return null;
  }
}

const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

// Received text goes into the module's one inbox (bindings/bus_bindings.cpp): encoded straight
// into WASM memory, then one call with numbers only (bench/README.md § bus). Views of HEAPU8 are
// rebuilt when memory grew and never held across a call into the module.
function createInbox(mod, maxEnvelopeBytes) {
  let at = 0;
  let size = 0;
  let f64Buffer = null;
  let f64 = null;
  const outbox = mod.busInboxOutbox() / 8;
  let view = null; // HEAPU8 over the staging buffer, rebuilt when it moved or memory grew
  function reserve(n) {
    if (n > size) {
      at = mod.busInboxReserve(n);
      size = n;
      view = null;
    }
    if (view === null || view.buffer !== mod.HEAPU8.buffer) view = mod.HEAPU8.subarray(at, at + size);
    return view;
  }
  return {
    // Stages `text` and returns its length in bytes.
    stage(text) {
      text = String(text);
      // Well-formed text of at most maxEnvelopeBytes UTF-16 units: encodeInto, no copy in JS
      // (3 bytes per unit at most). Longer text is too large anyway and lone surrogates must stay
      // invalid: both are encoded first, so the core sees the real bytes and byte count.
      if (text.length <= maxEnvelopeBytes && text.isWellFormed()) {
        return utf8Encoder.encodeInto(text, reserve(Math.max(4096, text.length * 3))).written;
      }
      const bytes = textBytes(text);
      reserve(bytes.length).set(bytes);
      return bytes.length;
    },
    // The result text the last busInboxParse left at the outbox, parsed.
    result() {
      const buffer = mod.HEAPU8.buffer;
      if (buffer !== f64Buffer) {
        f64Buffer = buffer;
        f64 = new Float64Array(buffer);
      }
      const addr = f64[outbox];
      return JSON.parse(utf8Decoder.decode(mod.HEAPU8.subarray(addr, addr + f64[outbox + 1])));
    },
  };
}

// An envelope the core accepted, as JSON.parse read it, in the canonical key order with the
// absent optional members as null (agent-bus-notes.md § The envelope).
function canonicalEnvelope(o) {
  const f = o.from;
  return {
    v: 1,
    id: o.id,
    type: o.type,
    from: { streamId: f.streamId, role: f.role, name: f.name, instanceId: f.instanceId },
    to: o.to ?? null,
    topic: o.topic ?? null,
    ts: o.ts,
    payload: o.payload === undefined ? null : o.payload,
  };
}

const notJson = (field) => ({ ok: false, code: 'bad_payload', field, detail: `${field} cannot be written as JSON (cycles or BigInt?)` });

/** Wraps a loaded module. */
export function createBusApi(mod) {
  const limits = JSON.parse(mod.busLimits());
  // The largest envelope the core takes (a file_chunk; every other type stops at maxEnvelopeBytes).
  const inbox = createInbox(mod, limits.maxFileChunkEnvelopeBytes);

  function createBus(options) {
    const { self, transport } = options;
    const now = options.now ?? Date.now;
    const core = new mod.BusCore();
    const init = JSON.parse(
      core.init(
        JSON.stringify({
          self,
          seed: options.seed ?? randomSeed(),
          acceptHandoffs: !!options.acceptHandoffs,
          connIsStream: !!options.peerIdsAreStreams,
          announce: options.announce ?? null,
          transportId: options.transportId ?? null,
        }),
      ),
    );
    if (!init.ok) {
      core.delete();
      throw new TypeError(`tether/bus: ${init.detail}`);
    }
    const handlerSets = [options];
    let timer = null;
    let closed = false;

    function emit(key, ...args) {
      for (const h of handlerSets.slice()) {
        const fn = h[key];
        if (typeof fn !== 'function') continue;
        try {
          fn.apply(h, args);
        } catch (e) {
          // A throwing handler must not stop the bus, the other handlers or the process.
          console.error(`tether/bus: a ${key} handler threw`, e);
        }
      }
    }

    // Offers every pending transmit; each result decides what the core offers next.
    function transmitAll() {
      for (let t = core.pollTransmit(); t !== null; t = core.pollTransmit()) {
        let accepted;
        try {
          // Only an explicit false is a rejection (§ Compatibility: void-returning sends count as accepted).
          accepted = transport.send(t.peer, t.text) !== false;
        } catch {
          accepted = false;
        }
        core.transmitResult(t.token, accepted);
      }
    }

    function dispatch() {
      for (let round = 0; round < 64; round++) {
        const text = core.takeEvents();
        if (text === '') return;
        for (const ev of JSON.parse(text)) {
          switch (ev.kind) {
            case 'message':
              emit('message', ev.envelope, { peer: ev.peer, replayed: ev.replayed });
              break;
            case 'rejected':
              emit('rejected', ev.error, ev.peer);
              break;
            case 'handoff':
              emit('handoff', { envelope: ev.envelope, request: ev.request, expiresAt: ev.expiresAt, key: ev.key, peer: ev.peer });
              break;
            case 'handoffStored':
              emit('handoffStored', ev.handoff);
              break;
            case 'handoffExpired':
              emit('handoffExpired', ev.handoff);
              break;
            case 'confirmation': {
              const { kind, ...c } = ev;
              void kind;
              emit('confirmation', c);
              break;
            }
            case 'peer':
              emit('peer', ev.peer);
              break;
          }
        }
        transmitAll(); // handlers may have sent
      }
    }

    const autoTick = options.autoTick !== false;
    function schedule() {
      if (closed || !autoTick) return;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const wake = core.nextWake();
      if (wake < 0) return;
      timer = setTimeout(() => {
        timer = null;
        if (closed) return;
        core.tick(now());
        settle();
      }, Math.max(0, Math.min(wake - now(), 2 ** 31 - 1)));
      timer.unref?.();
    }

    function settle() {
      transmitAll();
      dispatch();
      schedule();
    }

    function sentResult(text, transientType) {
      const r = JSON.parse(text);
      if (!r.ok) return r;
      transmitAll();
      const status = core.outcome(r.id);
      let out;
      if (transientType && status !== 'sent') {
        out = { ok: false, code: 'not_accepted', field: 'to', detail: 'the transport did not accept it; transient messages are never queued (retry later)' };
      } else {
        out = { ok: true, id: r.id, status: status === 'sent' ? 'sent' : 'queued', envelope: r.envelope };
      }
      dispatch();
      schedule();
      return out;
    }

    // Transport events go to the core as they come. Who is reachable (the room roster against
    // the transport's open/close, holding a re-listed channel until it carries a message) is the
    // core's decision: see "Reachability" in src/bus/bus.hpp.
    const unsubscribe = transport.subscribe({
      open(peer) {
        core.open(peer, now());
        settle();
      },
      close(peer) {
        core.closed(peer);
        settle();
      },
      text(peer, text) {
        text = String(text);
        // The core says what is waiting, so an ordinary message costs one call, not four.
        let pending = core.receiveStaged(peer, inbox.stage(text), now());
        if (pending & 1) transmitAll(); // never with bit 4: the core holds that back then
        if (pending & 4) {
          // Delivered as our own text: the core's scanner took it, so JSON.parse of it in
          // canonical order is the envelope the event would have carried (src/bus/scan.hpp).
          emit('message', canonicalEnvelope(JSON.parse(text)), { peer, replayed: false });
          pending = core.pending(); // the handlers may have sent or caused events
          if (pending & 1) transmitAll();
        }
        if (pending & 2) dispatch();
        schedule();
      },
      roster(peers) {
        core.roster(JSON.stringify([...peers]));
        settle();
      },
      // Our own signaling came back: peers whose rosters dropped us meanwhile wake on our announce.
      reconnect() {
        core.signalingRestored(now());
        settle();
      },
    });
    for (const peer of transport.openPeers()) core.open(peer, now());
    settle();

    const bus = {
      self: { ...self },
      limits,
      send(to, type, payload, opts = {}) {
        const p = json(payload);
        if (p === null) return notJson('payload');
        const topic = opts.topic ?? null;
        return sentResult(core.send(to, type, p, topic ?? '', topic !== null, now()), mod.busIsTransient(type));
      },
      broadcast(type, payload, opts = {}) {
        const p = json(payload);
        if (p === null) return notJson('payload');
        const topic = opts.topic ?? null;
        const r = JSON.parse(core.broadcast(type, p, topic ?? '', topic !== null, now()));
        if (!r.ok) return r;
        transmitAll();
        const { sentTo, rejectedBy } = JSON.parse(core.lastBroadcast());
        dispatch();
        schedule();
        return { ok: true, id: r.id, envelope: r.envelope, sentTo, rejectedBy };
      },
      requestHistory(to, count) {
        return sentResult(core.requestHistory(to, json(count) ?? 'null', now()), false);
      },
      history(count, forPeer) {
        return JSON.parse(core.history(typeof count === 'number' && count >= 0 ? count : -1, forPeer ?? ''));
      },
      ack(envelope, extra = {}) {
        const e = json(envelope);
        const x = json(extra);
        if (e === null || x === null) return notJson('extra');
        return sentResult(core.reply(false, e, x, now()), false);
      },
      respond(command, outcome) {
        const e = json(command);
        const x = json(outcome);
        if (e === null || x === null) return notJson('outcome');
        return sentResult(core.reply(true, e, x, now()), false);
      },
      handoff(to, request, opts = {}) {
        const t = now();
        const expiresAt = opts.expiresAt ?? t + (opts.ttlMs ?? limits.handoffMaxTtlMs);
        if (typeof request !== 'string' || !Number.isFinite(expiresAt))
          return { ok: false, code: 'bad_payload', field: 'payload', detail: 'a handoff needs request text and a finite expiry' };
        const r = JSON.parse(core.handoff(to, request, expiresAt, t));
        settle();
        return r;
      },
      resumeHandoff(envelope) {
        const e = json(envelope);
        if (e === null) return notJson('envelope');
        const r = JSON.parse(core.resumeHandoff(e, now()));
        settle();
        return r;
      },
      noteSent(envelope) {
        const e = json(envelope);
        if (e === null) return notJson('envelope');
        return JSON.parse(core.noteSent(e));
      },
      cancelHandoff(id) {
        const r = core.cancelHandoff(id);
        schedule();
        return r;
      },
      pendingHandoffs: () => JSON.parse(core.pendingHandoffs()),
      confirmHandoff(key) {
        return sentResult(core.confirmHandoff(key, now()), false);
      },
      rememberHandoffs(keys) {
        for (const k of keys) core.rememberHandoff(k);
      },
      peers: () => JSON.parse(core.peers()),
      tick() {
        core.tick(now());
        settle();
      },
      nextWakeMs() {
        const w = core.nextWake();
        return w < 0 ? null : w;
      },
      queued: (streamId) => core.queued(streamId ?? ''),
      isOpen: (peer) => core.isOpen(String(peer)),
      subscribe(handlers) {
        handlerSets.push(handlers);
        return () => {
          const i = handlerSets.indexOf(handlers);
          if (i >= 0) handlerSets.splice(i, 1);
        };
      },
      setAnnounce(announce) {
        const a = json(announce);
        if (a === null) return notJson('announce');
        const r = JSON.parse(core.setAnnounce(a, now()));
        if (!r.ok) return r;
        transmitAll();
        const { sentTo, rejectedBy } = JSON.parse(core.lastBroadcast());
        dispatch();
        schedule();
        return { ok: true, id: r.id, envelope: r.envelope, sentTo, rejectedBy };
      },
      close() {
        if (closed) return;
        closed = true;
        if (timer !== null) clearTimeout(timer);
        unsubscribe();
        core.delete();
      },
    };
    return bus;
  }

  return {
    limits,
    envelopeVersion: mod.busEnvelopeVersion(),
    createBus,
    parseEnvelope(text) {
      text = String(text);
      const n = inbox.stage(text);
      // The core's one-pass scanner accepted it: then JSON.parse of the text we already hold
      // gives exactly the values of the core's canonical result (src/bus/scan.hpp: escape-free
      // header strings, numbers whose value both agree on), so the result needs no trip back.
      if (mod.busInboxScan(n)) return { ok: true, envelope: canonicalEnvelope(JSON.parse(text)) };
      mod.busInboxParse(n); // everything else: the core's DOM path, its result or its refusal
      return inbox.result();
    },
    serializeEnvelope(envelope) {
      const t = json(envelope);
      if (t === null) return notJson('envelope');
      return JSON.parse(mod.busSerializeEnvelope(t));
    },
    isTransient: (type) => mod.busIsTransient(String(type)),
    parseShareCommand(envelope) {
      const t = typeof envelope === 'string' ? envelope : json(envelope);
      if (t === null) return notJson('envelope');
      return JSON.parse(mod.busParseShareCommand(t));
    },
    shareCommandPayload: ({ command, share = '', path = '' }) =>
      JSON.parse(mod.busShareCommandPayload(String(command), String(share), String(path))),
    fileAckRefusal: (payload, error) => JSON.parse(mod.busFileAckRefusal(json(payload) ?? 'null', String(error ?? ''))),
    fileAckReceived: (offer, savedPath = '') => JSON.parse(mod.busFileAckReceived(json(offer) ?? 'null', String(savedPath))),
    matchReceipt(envelope, { requestId, peer, senderInstanceId }) {
      const t = typeof envelope === 'string' ? envelope : json(envelope);
      if (t === null) return null;
      return JSON.parse(mod.busMatchReceipt(t, requestId, peer, senderInstanceId ?? '', senderInstanceId !== undefined));
    },
    planFileSend({ bytes, name, mimeType = '', kind = 'file', chunkSize = limits.fileDefaultChunkSize, transferId = '' }) {
      const p = new mod.BusFilePlan();
      const view = p.input(bytes.length);
      if (view === null) {
        p.delete();
        return { ok: false, code: 'file_too_large', field: 'bytes', detail: `the one-to-one transfer stops at ${limits.fileMaxBytes} bytes (use a swarm transfer)` };
      }
      view.set(bytes);
      const r = JSON.parse(p.plan(name, mimeType, kind, chunkSize, transferId, randomSeed()));
      if (!r.ok) {
        p.delete();
        return r;
      }
      return {
        ok: true,
        plan: {
          offer: r.offer,
          complete: r.complete,
          chunk: (index) => JSON.parse(p.chunk(index)),
          dispose: () => p.delete(),
        },
      };
    },
    createFileReceiver({
      maxFileBytes = limits.fileMaxBytes,
      maxIncomplete = limits.fileReceiverMaxIncomplete,
      maxPromisedBytes = limits.fileReceiverMaxPromisedBytes,
    } = {}) {
      const rx = new mod.BusFileReceiver(maxFileBytes, maxIncomplete, maxPromisedBytes);
      const text = (v) => (typeof v === 'string' ? v : (json(v) ?? 'null'));
      return {
        offer: (from, payload) => JSON.parse(rx.offer(from, text(payload))),
        chunk(from, payload) {
          const r = JSON.parse(rx.chunk(from, text(payload)));
          if (r.ok) r.data = rx.data().slice();
          return r;
        },
        complete: (from, payload) => JSON.parse(rx.complete(from, text(payload))),
        abort: (id) => rx.abort(id),
        incomplete: () => rx.incomplete(),
        promisedBytes: () => rx.promised(),
        dispose: () => rx.delete(),
      };
    },
  };
}
