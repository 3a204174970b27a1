// `tether/bus`: the agent message bus for JavaScript (agent-bus-and-swarm.md § Delivery semantics).
// A thin wrapper over src/bus: it feeds transport events and received text into the core, offers
// the core's transmits to the transport one at a time (reporting the boolean send result back,
// which is what fixes the peerConnected-before-open race), hands the core's events to handlers,
// and keeps one timer for the core's next wake. It makes no protocol decisions (DESIGN.md rule 4).
import { loadTetherModule } from './load.js';
import { createDriver } from './driver.js';
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
    // A view of memory that grew is detached and reads as empty (cheaper than comparing buffers).
    if (view === null || view.length === 0) view = mod.HEAPU8.subarray(at, at + size);
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

// The core's tables, read once per module: the record's layout, the event kinds, the message
// types and the tape's token kinds (bindings/bus_bindings.cpp).
const tablesOf = new WeakMap();
function tables(mod) {
  let t = tablesOf.get(mod);
  if (!t) {
    const names = mod.busNames();
    // Spread: the object Embind built is in dictionary mode (37 properties set one by one), and the
    // receive path reads ~30 of them per message; a literal copy has fast properties.
    t = { L: { ...mod.busRecordLayout() }, version: mod.busEnvelopeVersion(), ...names };
    tablesOf.set(mod, t);
  }
  return t;
}

// Views of the module's memory, rebuilt when it grew: growing detaches the old buffer, and a view
// of a detached buffer has length 0, which is cheaper to test than the module's current buffer.
function heapViews(mod) {
  let f64 = new Float64Array(0);
  let u32 = new Uint32Array(0);
  return {
    f64() {
      if (f64.length === 0) {
        f64 = new Float64Array(mod.HEAPU8.buffer);
        u32 = new Uint32Array(mod.HEAPU8.buffer);
      }
      return f64;
    },
    u32() {
      if (u32.length === 0) this.f64();
      return u32;
    },
  };
}

function setMember(obj, key, value) {
  // JSON.parse makes "__proto__" an own property; an assignment would set the prototype instead.
  if (key === '__proto__')
    Object.defineProperty(obj, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  else obj[key] = value;
}

// The payload's keys, one per key token in order: fresh slices, kept for the next payload (`fill`),
// or those kept from the last payload whose key bytes the core found equal (`reuse`); see
// Repeats in bindings/bus_bindings.cpp.
function keyAt(keys, j, reuse, text, b, e) {
  if (reuse) {
    const k = keys[j];
    if (k !== undefined) return k;
  }
  const k = text.slice(b, e);
  keys[j] = k;
  return k;
}

// A flat object of plain keys and scalars (chat, ack, a file_chunk), the common payload, without
// the general walk's stacks; undefined when the tape holds anything else.
function flatFromTape(text, w, at, end, K, keys, reuse) {
  if (w[at] !== K.objectBegin || w[end - 3] !== K.objectEnd) return undefined;
  const out = {};
  let j = 0;
  for (let i = at + 3; i < end - 3; i += 6) {
    if (w[i] !== K.key) return undefined;
    const kind = w[i + 3];
    let value;
    if (kind === K.string) value = text.slice(w[i + 4], w[i + 5]);
    else if (kind === K.number) value = Number(text.slice(w[i + 4], w[i + 5]));
    else if (kind === K.true) value = true;
    else if (kind === K.false) value = false;
    else if (kind === K.null) value = null;
    else return undefined;
    setMember(out, keyAt(keys, j++, reuse, text, w[i + 1], w[i + 2]), value);
  }
  if (!reuse) keys.length = j;
  return out;
}

// A payload from the scanner's tape (src/bus/scan.hpp): strings are slices of the text, so a 64 KiB
// base64 string costs no copy; escaped ones, and numbers, are read from their own slice.
function fromTape(text, w, at, end, K, keys, reuse) {
  const flat = flatFromTape(text, w, at, end, K, keys, reuse);
  if (flat !== undefined) return flat;
  const stack = [];
  const pending = [];
  let j = 0;
  let out = null;
  for (let i = at; i < end; i += 3) {
    const kind = w[i];
    let value;
    switch (kind) {
      case K.objectBegin:
        stack.push({});
        continue;
      case K.arrayBegin:
        stack.push([]);
        continue;
      case K.key:
        pending.push(keyAt(keys, j++, reuse, text, w[i + 1], w[i + 2]));
        continue;
      case K.keyEscaped: {
        const k = JSON.parse(text.slice(w[i + 1] - 1, w[i + 2] + 1));
        keys[j++] = k; // never reused: the core reports no repeat for a payload with one
        pending.push(k);
        continue;
      }
      case K.objectEnd:
      case K.arrayEnd:
        value = stack.pop();
        break;
      case K.string:
        value = text.slice(w[i + 1], w[i + 2]);
        break;
      case K.stringEscaped:
        value = JSON.parse(text.slice(w[i + 1] - 1, w[i + 2] + 1));
        break;
      case K.number:
        value = Number(text.slice(w[i + 1], w[i + 2]));
        break;
      case K.true:
        value = true;
        break;
      case K.false:
        value = false;
        break;
      default:
        value = null;
    }
    const top = stack.length ? stack[stack.length - 1] : undefined;
    if (top === undefined) out = value;
    else if (Array.isArray(top)) top.push(value);
    else setMember(top, pending.pop(), value);
  }
  if (!reuse) keys.length = j;
  return out;
}

// What a bus keeps from the last message it read through spans, for the core's "same again" flags
// (Repeats in bindings/bus_bindings.cpp): strings are immutable, so sharing them between
// envelopes is invisible to the application; every envelope still gets objects of its own.
function createRepeats() {
  return { streamId: '', role: '', name: '', instanceId: '', to: '', topic: '', keys: [] };
}

// An optional string member of the envelope (`to`, `topic`): null when absent (begin < 0), the
// kept string when the core flagged it the same again, else a fresh slice, kept for the next one.
function optionalMember(text, begin, end, same, kept, field) {
  if (begin < 0) return null;
  if (same) return kept[field];
  const value = text.slice(begin, end);
  if (kept !== null) kept[field] = value;
  return value;
}

// The envelope the record's spans describe in `text` (the text the caller passed): its values are
// those JSON.parse of the text gives, in the canonical key order with absent members as null.
// `kept` is the bus's createRepeats() (null: the inbox's parse, which reports no repeats).
function readSpans(text, f, r, heap, T, kept) {
  const L = T.L;
  const flags = kept === null ? 0 : f[r + L.evFlags];
  let payload = null;
  const p0 = f[r + L.payloadBegin];
  if (p0 >= 0) {
    const words = f[r + L.tapeWords];
    if (words > 0) {
      const at = f[r + L.tapeAt] / 4;
      const keys = kept === null ? [] : kept.keys;
      payload = fromTape(
        text,
        heap.u32(),
        at,
        at + words,
        T.tapeKinds,
        keys,
        (flags & L.flagSameKeys) !== 0,
      );
    } else {
      payload = JSON.parse(text.slice(p0, f[r + L.payloadEnd]));
    }
  }
  let from;
  if (flags & L.flagSameFrom) {
    from = {
      streamId: kept.streamId,
      role: kept.role,
      name: kept.name,
      instanceId: kept.instanceId,
    };
  } else {
    from = {
      streamId: text.slice(f[r + L.streamBegin], f[r + L.streamEnd]),
      role: text.slice(f[r + L.roleBegin], f[r + L.roleEnd]),
      name: text.slice(f[r + L.nameBegin], f[r + L.nameEnd]),
      instanceId: text.slice(f[r + L.instanceBegin], f[r + L.instanceEnd]),
    };
    if (kept !== null) {
      kept.streamId = from.streamId;
      kept.role = from.role;
      kept.name = from.name;
      kept.instanceId = from.instanceId;
    }
  }
  return {
    v: T.version,
    id: text.slice(f[r + L.idBegin], f[r + L.idEnd]),
    type: T.messageTypes[f[r + L.evType]],
    from,
    to: optionalMember(text, f[r + L.toBegin], f[r + L.toEnd], flags & L.flagSameTo, kept, 'to'),
    topic: optionalMember(
      text,
      f[r + L.topicBegin],
      f[r + L.topicEnd],
      flags & L.flagSameTopic,
      kept,
      'topic',
    ),
    ts: f[r + L.evTs],
    payload,
  };
}

const notJson = (field) => ({
  ok: false,
  code: 'bad_payload',
  field,
  detail: `${field} cannot be written as JSON (cycles or BigInt?)`,
});

/** Wraps a loaded module. */
export function createBusApi(mod) {
  const limits = JSON.parse(mod.busLimits());
  const T = tables(mod);
  const { L } = T;
  const heap = heapViews(mod);
  // The largest envelope the core takes (a file_chunk; every other type stops at maxEnvelopeBytes).
  const inbox = createInbox(mod, limits.maxFileChunkEnvelopeBytes);
  const inboxRecord = mod.busInboxRecord() / 8;

  function createBus(options) {
    const { self, transport } = options;
    const now = options.now ?? Date.now;
    const core = new mod.BusCore();
    const refused = core.init(
      JSON.stringify({
        self,
        seed: options.seed ?? randomSeed(),
        acceptHandoffs: !!options.acceptHandoffs,
        connIsStream: !!options.peerIdsAreStreams,
        announce: options.announce ?? null,
        transportId: options.transportId ?? null,
      }),
    );
    if (refused !== '') {
      core.delete();
      throw new TypeError(`tether/bus: ${JSON.parse(refused).detail}`);
    }
    const rec = core.record() / 8;
    const handlerSets = [options];
    let closed = false;

    // Connections cross as numbers; each name is registered with the core once.
    const names = [];
    const numbers = new Map();
    function num(peer) {
      let n = numbers.get(peer);
      if (n === undefined) {
        n = core.conn(peer);
        numbers.set(peer, n);
        names[n] = peer;
      }
      return n;
    }
    // Texts passed in whose message events may still be polled: a message the core's scanner
    // took is read from the text itself (readSpans), never from a copy the core wrote. The last
    // one is kept aside; older ones (a text that arrived while another's events were pending)
    // wait in the map.
    const texts = new Map();
    let nextTag = 0;
    let lastTag = 0;
    let lastText = '';
    const textOf = (tag) => {
      if (tag === lastTag) return lastText;
      const t = texts.get(tag);
      texts.delete(tag);
      return t;
    };
    let txSerial = -1;
    let txText = '';

    function emit(key, a, b) {
      // A copy only when there are several sets: a handler may subscribe or unsubscribe.
      const sets = handlerSets.length === 1 ? handlerSets : handlerSets.slice();
      for (let i = 0; i < sets.length; i++) {
        const h = sets[i];
        const fn = h[key];
        if (typeof fn !== 'function') continue;
        try {
          fn.call(h, a, b);
        } catch (e) {
          // A throwing handler must not stop the bus, the other handlers or the process.
          console.error(`tether/bus: a ${key} handler threw`, e);
        }
      }
    }

    // --- the core on the one drive contract (web/glue/driver.js) -------------------------------
    // The status word in the record says what waits, so polling for nothing costs no call.
    const STATUS = rec + L.status;
    const BIT_TX = L.bitTransmit;
    const BIT_EVENTS = L.bitEvents;
    const BIT_IN_RECORD = L.bitEventInRecord;
    function pollTransmit() {
      if (!(heap.f64()[STATUS] & BIT_TX) || !core.pollTransmit()) return null;
      const f = heap.f64();
      if (f[rec + L.txSerial] !== txSerial) {
        // One decode per distinct text: a broadcast's one text goes to every peer.
        txSerial = f[rec + L.txSerial];
        const at = f[rec + L.txAt];
        txText = utf8Decoder.decode(mod.HEAPU8.subarray(at, at + f[rec + L.txLen]));
      }
      return { token: f[rec + L.txToken], peer: names[f[rec + L.txConn]], text: txText };
    }
    const liveEvent = { kind: 'message', envelope: null, peer: '', replayed: false };
    const repeats = createRepeats();
    function pollEvent() {
      let f = heap.f64();
      const s = f[STATUS];
      if (s & BIT_IN_RECORD) {
        f[STATUS] = s & ~BIT_IN_RECORD;
      } else if (!(s & BIT_EVENTS)) {
        if (texts.size) texts.clear(); // nothing left that could read them
        lastTag = 0;
        lastText = '';
        return null;
      } else if (core.pollEvent() < 0) {
        return null;
      } else {
        f = heap.f64();
      }
      if (f[rec + L.evFlags] & L.flagSpans) {
        // One object for every such event: only deliver() reads it, before the next poll.
        liveEvent.envelope = readSpans(textOf(f[rec + L.evTag]), f, rec, heap, T, repeats);
        liveEvent.peer = names[f[rec + L.evConn]];
        return liveEvent;
      }
      const at = f[rec + L.jsonAt];
      return JSON.parse(utf8Decoder.decode(mod.HEAPU8.subarray(at, at + f[rec + L.jsonLen])));
    }
    const driven = { pollAction: pollTransmit, pollEvent };
    if (options.autoTick !== false) {
      driven.pollTimeout = () => {
        const t = heap.f64()[rec + L.timeout];
        return t < 0 ? null : t;
      };
      driven.handleTimeout = (t) => core.timeout(t);
    }

    // Offers one transmit; its result decides what the core offers next (a transport's false stops
    // that peer's flush exactly there).
    function perform(t) {
      let accepted;
      try {
        // Only an explicit false is a rejection (§ Compatibility: void-returning sends count as accepted).
        accepted = transport.send(t.peer, t.text) !== false;
      } catch {
        accepted = false;
      }
      core.transmitResult(t.token, accepted, now());
    }
    // A send answers with the transport's verdict, so its transmits are offered before it returns,
    // even from inside an event handler (where the driver's drain is running).
    function flushTransmits() {
      for (let t = pollTransmit(); t !== null; t = pollTransmit()) perform(t);
    }

    function deliver(ev) {
      switch (ev.kind) {
        case 'message': {
          const envelope = ev.envelope;
          ev.envelope = null; // liveEvent holds no envelope past its delivery
          emit('message', envelope, { peer: ev.peer, replayed: ev.replayed });
          break;
        }
        case 'rejected':
          emit('rejected', ev.error, ev.peer);
          break;
        case 'handoff':
          emit('handoff', {
            envelope: ev.envelope,
            request: ev.request,
            expiresAt: ev.expiresAt,
            key: ev.key,
            peer: ev.peer,
          });
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

    const driver = createDriver(driven, { perform, event: deliver }, { now });
    const input = (fn) => (closed ? undefined : driver.input(fn));
    // The hot input without a closure per message: the text goes to the core through the plain
    // export (bindings/bus_bindings.cpp: tether_bus_text), staged in the module's inbox.
    const address = core.address();
    let received = '';
    let receivedFrom = 0;
    // The core reads the time only for some texts (Bus::reads_time, a held channel's wake): the text
    // goes without it (NaN), and when the status says it needs it, again with now().
    const BIT_NEEDS_TIME = L.bitNeedsTime;
    function receive() {
      const text = received;
      // The previous text may still be read by an event it made that is not polled yet.
      if (lastTag !== 0 && heap.f64()[STATUS] & (BIT_EVENTS | BIT_IN_RECORD))
        texts.set(lastTag, lastText);
      lastTag = ++nextTag;
      lastText = text;
      const n = inbox.stage(text);
      mod._tether_bus_text(address, receivedFrom, n, NaN, lastTag);
      if (heap.f64()[STATUS] & BIT_NEEDS_TIME)
        mod._tether_bus_text(address, receivedFrom, n, now(), lastTag);
    }

    function sent(call, transient) {
      if (closed)
        return {
          ok: false,
          code: 'closed',
          field: '',
          detail: 'this bus was closed; create a new one',
        };
      return driver.input((t) => {
        const r = JSON.parse(call(t));
        if (!r.ok) return r;
        flushTransmits();
        const settled = JSON.parse(core.sendResult(r.id, transient));
        if (!settled.ok) return settled;
        return { ok: true, id: r.id, status: settled.status, envelope: r.envelope };
      });
    }
    function broadcastResult(call) {
      if (closed)
        return {
          ok: false,
          code: 'closed',
          field: '',
          detail: 'this bus was closed; create a new one',
        };
      return driver.input((t) => {
        const r = JSON.parse(call(t));
        if (!r.ok) return r;
        flushTransmits();
        const { sentTo, rejectedBy } = JSON.parse(core.lastBroadcast());
        return { ok: true, id: r.id, envelope: r.envelope, sentTo, rejectedBy };
      });
    }

    // Transport events go to the core as they come. Who is reachable (the room roster against
    // the transport's open/close, holding a re-listed channel until it carries a message) is the
    // core's decision: see "Reachability" in src/bus/bus.hpp.
    const unsubscribe = transport.subscribe({
      open(peer) {
        input((t) => core.open(num(peer), t));
      },
      close(peer) {
        input((t) => core.closed(num(peer), t));
      },
      text(peer, text) {
        if (closed) return;
        received = String(text);
        receivedFrom = num(peer);
        driver.run(receive);
      },
      roster(peers) {
        input((t) => core.roster(JSON.stringify(Array.from(peers, num)), t));
      },
      // Our own signaling came back: peers whose rosters dropped us meanwhile wake on our announce.
      reconnect() {
        input((t) => core.signalingRestored(t));
      },
    });
    input((t) => {
      for (const peer of transport.openPeers()) core.open(num(peer), t);
    });

    const bus = {
      self: { ...self },
      limits,
      send(to, type, payload, opts = {}) {
        const p = json(payload);
        if (p === null) return notJson('payload');
        const topic = opts.topic ?? null;
        return sent(
          (t) => core.send(to, type, p, topic ?? '', topic !== null, t),
          mod.busIsTransient(String(type)),
        );
      },
      broadcast(type, payload, opts = {}) {
        const p = json(payload);
        if (p === null) return notJson('payload');
        const topic = opts.topic ?? null;
        return broadcastResult((t) => core.broadcast(type, p, topic ?? '', topic !== null, t));
      },
      requestHistory(to, count) {
        return sent((t) => core.requestHistory(to, json(count) ?? 'null', t), false);
      },
      history(count, forPeer) {
        return JSON.parse(
          core.history(typeof count === 'number' && count >= 0 ? count : -1, forPeer ?? ''),
        );
      },
      ack(envelope, extra = {}) {
        const e = json(envelope);
        const x = json(extra);
        if (e === null || x === null) return notJson('extra');
        return sent((t) => core.reply(false, e, x, t), false);
      },
      respond(command, outcome) {
        const e = json(command);
        const x = json(outcome);
        if (e === null || x === null) return notJson('outcome');
        return sent((t) => core.reply(true, e, x, t), false);
      },
      handoff(to, request, opts = {}) {
        const t0 = now();
        const expiresAt = opts.expiresAt ?? t0 + (opts.ttlMs ?? limits.handoffMaxTtlMs);
        if (typeof request !== 'string' || !Number.isFinite(expiresAt))
          return {
            ok: false,
            code: 'bad_payload',
            field: 'payload',
            detail: 'a handoff needs request text and a finite expiry',
          };
        return input((t) => JSON.parse(core.handoff(to, request, expiresAt, t)));
      },
      resumeHandoff(envelope) {
        const e = json(envelope);
        if (e === null) return notJson('envelope');
        return input((t) => JSON.parse(core.resumeHandoff(e, t)));
      },
      noteSent(envelope) {
        const e = json(envelope);
        if (e === null) return notJson('envelope');
        return JSON.parse(core.noteSent(e));
      },
      cancelHandoff(id) {
        return input(() => core.cancelHandoff(id));
      },
      pendingHandoffs: () => JSON.parse(core.pendingHandoffs()),
      confirmHandoff(key) {
        return sent((t) => core.confirmHandoff(key, t), false);
      },
      rememberHandoffs(keys) {
        for (const k of keys) core.rememberHandoff(k);
      },
      peers: () => JSON.parse(core.peers()),
      tick() {
        input((t) => core.timeout(t));
      },
      nextWakeMs() {
        const t = heap.f64()[rec + L.timeout];
        return t < 0 ? null : t;
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
        return broadcastResult((t) => core.setAnnounce(a, t));
      },
      close() {
        if (closed) return;
        closed = true;
        driver.close();
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
      // The core's one-pass scanner accepted it: the envelope is read from the text we already
      // hold, through the spans it reported (escape-free header strings, numbers whose value
      // JSON.parse and the core agree on: src/bus/scan.hpp), so nothing but numbers comes back.
      if (mod.busInboxScanSpans(n))
        return { ok: true, envelope: readSpans(text, heap.f64(), inboxRecord, heap, T, null) };
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
    /** A path inside a share as its owner reads it (src/bus/shares.hpp share_path). */
    sharePath: (p) => mod.busSharePath(String(p ?? '')),
    validShareName: (name) => typeof name === 'string' && mod.busValidShareName(name),
    listFilesResult: (share, path, entries, omitted) =>
      JSON.parse(
        mod.busListFilesResult(String(share), String(path), JSON.stringify(entries), omitted),
      ),
    directSendTypes: Object.freeze(JSON.parse(mod.busDirectSendTypes())),
    shareCommandPayload: ({ command, share = '', path = '' }) =>
      JSON.parse(mod.busShareCommandPayload(String(command), String(share), String(path))),
    // Typed text crosses as JSON text, so a lone surrogate reaches the core as what it is
    // (Embind's own string conversion would merge it with the next code unit: bus_bindings.cpp).
    typedPayload: (type, text, argsJson) =>
      JSON.parse(
        mod.busTypedPayload(
          String(type),
          JSON.stringify(String(text)),
          argsJson ?? '',
          argsJson !== undefined,
        ),
      ),
    commandResponse: (
      requestId,
      { resultJson, error } = /** @type {{resultJson?: string, error?: string}} */ ({}),
    ) =>
      JSON.parse(
        mod.busCommandResponse(
          JSON.stringify(String(requestId)),
          resultJson ?? '',
          resultJson !== undefined,
          JSON.stringify(String(error ?? '')),
          error !== undefined,
        ),
      ),
    fileAckRefusal: (payload, error) =>
      JSON.parse(mod.busFileAckRefusal(json(payload) ?? 'null', String(error ?? ''))),
    fileAckReceived: (offer, savedPath = '') =>
      JSON.parse(mod.busFileAckReceived(json(offer) ?? 'null', String(savedPath))),
    matchReceipt(envelope, { requestId, peer, senderInstanceId }) {
      const t = typeof envelope === 'string' ? envelope : json(envelope);
      if (t === null) return null;
      return JSON.parse(
        mod.busMatchReceipt(
          t,
          requestId,
          peer,
          senderInstanceId ?? '',
          senderInstanceId !== undefined,
        ),
      );
    },
    planFileSend({
      bytes,
      name,
      mimeType = '',
      kind = 'file',
      maxMessageBytes = 0,
      // The core sizes chunks so each file_chunk envelope fits the peer's transport.
      chunkSize = mod.busFileChunkSizeFor(maxMessageBytes),
      transferId = '',
    }) {
      const p = new mod.BusFilePlan();
      const view = p.input(bytes.length);
      if (view === null) {
        p.delete();
        return {
          ok: false,
          code: 'file_too_large',
          field: 'bytes',
          detail: `the one-to-one transfer stops at ${limits.fileMaxBytes} bytes (use a swarm transfer)`,
        };
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
