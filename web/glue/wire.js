// `tether/wire`: the cockpit v7 codec for JavaScript. A thin wrapper over the C++ wire core
// (src/wire): it moves bytes in and out of WASM memory and turns validated JSON text into objects.
// It makes no protocol decisions (DESIGN.md rule 4). Errors are values: { ok: false, ... }.
import { heapF64 } from './heap-view.js';
import { loadTetherModule } from './load.js';
import { textBytes } from './text-bytes.js';

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

/**
 * Loads the wire codec. Under workerd the package's `workerd` condition brings its own precompiled
 * module, so no options are needed; elsewhere { wasmModule } or { wasmBinary } replace the fetch.
 * @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 */
export async function loadWire(options) {
  return createWire(await loadTetherModule(options, 'wire'));
}

/** Wraps a loaded module. */
export function createWire(mod) {
  const codec = new mod.WireCodec();
  const errorCodes = Object.fromEntries(
    mod.wireErrorCodes().map(({ code, ...rest }) => [code, rest]),
  );
  const limits = mod.wireLimits();
  const enums = mod.wireEnums();
  const frameErrors = mod.wireFrameErrors();
  const deliveryNames = mod.wireDeliveryNames();
  const record = mod.wireFrameRecordLayout();
  // A framing failure as a value: the local reason, its text, and the protocol code to send.
  const frameError = (reason) => ({
    reason,
    message: frameErrors[reason]?.message ?? reason,
    code: frameErrors[reason]?.code ?? 'invalid_control',
  });

  // Every Embind call costs far more than the work behind it on a small frame, so the binding
  // takes numbers, returns an int, and leaves its results in WASM memory for us to read
  // (bindings/wire_bindings.cpp, bench/README.md). Growing that memory replaces its buffer: views
  // are rebuilt when that happened, and are never held across a call into the module.
  const f64 = heapF64(mod);

  // Wraps one binding object: its staging buffer's address, its outbox, and its channel names.
  function port(inner) {
    return { inner, stagingAt: 0, stagingSize: 0, outbox: inner.outbox() / 8, names: [] };
  }

  // Copies `bytes` into the port's staging buffer in WASM memory; asks for a bigger one only when
  // they do not fit.
  function stage(p, bytes) {
    if (bytes.length > p.stagingSize) {
      p.stagingAt = p.inner.reserve(bytes.length);
      p.stagingSize = bytes.length;
    }
    mod.HEAPU8.set(bytes, p.stagingAt);
    return bytes.length;
  }

  // The bytes an encode call left in the outbox, copied out: the next call reuses that memory.
  function outBytes(p) {
    const f = f64();
    const at = f[p.outbox];
    return mod.HEAPU8.slice(at, at + f[p.outbox + 1]);
  }

  // The `count` frames a decode call left in the outbox. `input` holds the bytes just staged: a
  // payload inside them is returned as a view of them, with no copy; one the stream decoder
  // assembled from several chunks lives in WASM memory and is copied out.
  /** @param {ArrayLike<number>} input a Uint8Array (or a plain array of bytes: copied) */
  function framesOut(p, count, input) {
    const names = p.names;
    const named = f64()[p.outbox + 1];
    // Learn new channel names first: that call may grow WASM memory.
    while (names.length < named) names.push(p.inner.channelName(names.length));
    const f = f64();
    const heap = mod.HEAPU8;
    const viewable = ArrayBuffer.isView(input);
    let r = f[p.outbox] / 8;
    const frames = new Array(count);
    for (let i = 0; i < count; i++, r += record.size) {
      const channel = f[r + record.channel];
      let header;
      if (channel >= 0) {
        header = {
          ch: names[channel],
          seq: f[r + record.seq],
          ts: f[r + record.ts],
          delivery: deliveryNames[f[r + record.delivery]],
        };
      } else {
        header = headerAt(heap, f[r + record.headerAddr], f[r + record.headerLen]);
      }
      const at = f[r + record.payloadAddr];
      const len = f[r + record.payloadLen];
      const offset = at - p.stagingAt;
      frames[i] = {
        header,
        payload:
          viewable && offset >= 0 && offset + len <= input.length
            ? new Uint8Array(input.buffer, input.byteOffset + offset, len)
            : heap.slice(at, at + len),
      };
    }
    return frames;
  }

  function headerAt(heap, addr, len) {
    return JSON.parse(utf8.decode(heap.subarray(addr, addr + len)));
  }

  // Message text for the core: bytes as they are, a string or an object as UTF-8.
  function toText(input) {
    if (input instanceof Uint8Array) return input;
    return textBytes(typeof input === 'string' ? input : JSON.stringify(input));
  }

  function parseMessage(input, sender) {
    const r = mod.wireParseMessage(toText(input), sender);
    if (!r.ok) return { ok: false, drop: { reason: r.reason, field: r.field, detail: r.detail } };
    return { ok: true, type: r.type, message: JSON.parse(r.json), json: r.json };
  }

  class DataFrameStream {
    #port = port(new mod.WireDataStream());
    /**
     * Feeds a chunk; returns the frames it completed and, once the stream failed, its error.
     * A frame that arrived whole inside `chunk` has a payload that is a view of `chunk` (no copy):
     * do not reuse the chunk's memory while you still need that payload.
     */
    push(chunk) {
      const n = this.#port.inner.feed(stage(this.#port, chunk));
      if (n < 0) return { frames: [], error: frameError(this.#port.inner.error()) };
      return { frames: n === 0 ? [] : framesOut(this.#port, n, chunk), error: null };
    }
    /** The stream ended or was reset: reports a frame cut off mid-way. */
    finish() {
      const e = this.#port.inner.finish();
      return e ? frameError(e) : null;
    }
    get buffered() {
      return this.#port.inner.buffered();
    }
    close() {
      this.#port.inner.delete();
    }
  }

  class ControlStream {
    #port = port(new mod.WireControlStream());
    #sender;
    /** @param {'robot'|'viewer'|'relay'} sender who writes on this stream */
    constructor(sender) {
      this.#sender = sender;
    }
    /** Returns one parse result per complete message (drops included) and the stream's error. */
    push(chunk) {
      const p = this.#port;
      const n = p.inner.feed(stage(p, chunk));
      if (n < 0) return { messages: [], error: frameError(p.inner.error()) };
      // Copy every message's text out first: parsing one calls into the module, which may grow
      // its memory and so detach any view of it.
      const f = f64();
      const heap = mod.HEAPU8;
      const at = f[p.outbox] / 8;
      const texts = new Array(n);
      for (let i = 0; i < n; i++) {
        texts[i] = heap.slice(f[at + 2 * i], f[at + 2 * i] + f[at + 2 * i + 1]);
      }
      return { messages: texts.map((text) => parseMessage(text, this.#sender)), error: null };
    }
    finish() {
      const e = this.#port.inner.finish();
      return e ? frameError(e) : null;
    }
    get buffered() {
      return this.#port.inner.buffered();
    }
    close() {
      this.#port.inner.delete();
    }
  }

  const codecPort = port(codec);
  // The channel and delivery the codec holds: sent again only when they change, since passing a
  // string through Embind costs a malloc and a UTF-8 copy per call.
  let sentChannel;
  let sentDelivery;

  return {
    limits,
    enums,
    errorCodes,
    DataFrameStream,
    ControlStream,

    /** Encodes one data frame. header: {ch, seq, ts, delivery, meta?}. */
    encodeDataFrame(header, payload = new Uint8Array(0)) {
      const n = stage(codecPort, payload);
      const ch = String(header.ch);
      if (ch !== sentChannel) {
        codec.setChannel(textBytes(ch));
        sentChannel = ch;
      }
      const delivery = String(header.delivery);
      if (delivery !== sentDelivery) {
        codec.setDelivery(textBytes(delivery));
        sentDelivery = delivery;
      }
      const seq = Number(header.seq);
      const ts = Number(header.ts);
      const status =
        header.meta === undefined
          ? codec.dataFrame(seq, ts, n)
          : codec.dataFrameWithMeta(seq, ts, n, JSON.stringify(header.meta));
      if (status < 0) return { ok: false, error: frameError(codec.error()) };
      return { ok: true, bytes: outBytes(codecPort) };
    },

    /**
     * Decodes a buffer holding exactly one data frame (one WebSocket message). The payload is a
     * view of `bytes` (no copy): do not reuse their memory while you still need it.
     */
    decodeDataFrame(bytes) {
      if (codec.decodeFrame(stage(codecPort, bytes)) < 0) {
        return { ok: false, error: frameError(codec.error()) };
      }
      const frame = framesOut(codecPort, 1, bytes)[0];
      return { ok: true, header: frame.header, payload: frame.payload };
    },

    parseMessage,

    /** Validates a message object and returns its canonical JSON text. */
    encodeMessage(message, sender) {
      const r = parseMessage(message, sender);
      return r.ok ? { ok: true, json: r.json } : r;
    },
    /** A validated message, length-prefixed for a control stream. */
    encodeControlFrame(message, sender) {
      const r = parseMessage(message, sender);
      if (!r.ok) return r;
      if (codec.controlFrame(r.json) < 0) return { ok: false, error: frameError(codec.error()) };
      return { ok: true, bytes: outBytes(codecPort) };
    },
    /** A validated message as datagram bytes. */
    encodeDatagram(message, sender) {
      const r = parseMessage(message, sender);
      if (!r.ok) return r;
      return { ok: true, bytes: utf8Encoder.encode(r.json) };
    },

    /** Session checks on a hello, as the relay applies them: null or an error code name. */
    checkHello(message, endpoint) {
      return mod.wireCheckHello(toText(message), endpoint) || null;
    },

    /** Manifest v1: { ok: true, manifest } in normal form, or { ok: false, errors }. */
    validateManifest(manifest) {
      const r = mod.wireValidateManifest(toText(manifest));
      return r.ok ? { ok: true, manifest: JSON.parse(r.json) } : { ok: false, errors: r.errors };
    },
  };
}
