// `tether/wire`: the cockpit v7 codec for JavaScript. A thin wrapper over the C++ wire core
// (src/wire): it moves bytes in and out of WASM memory and turns validated JSON text into objects.
// It makes no protocol decisions (DESIGN.md rule 4). Errors are values: { ok: false, ... }.
import { loadTetherModule } from './load.js';

const utf8 = new TextDecoder();

/**
 * Loads the wire codec. In workerd pass { wasmModule } (the imported tether.wasm).
 * @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 */
export async function loadWire(options) {
  return createWire(await loadTetherModule(options));
}


/** Wraps a loaded module. */
export function createWire(mod) {
  const codec = new mod.WireCodec();
  const errorCodes = Object.fromEntries(
    mod.wireErrorCodes().map(({ code, ...rest }) => [code, rest]),
  );
  const limits = mod.wireLimits();
  const frameErrors = mod.wireFrameErrors();
  // A framing failure as a value: the local reason, its text, and the protocol code to send.
  const frameError = (reason) => ({
    reason,
    message: frameErrors[reason]?.message ?? reason,
    code: frameErrors[reason]?.code ?? 'invalid_control',
  });

  // Copies `bytes` into a staging buffer in WASM memory owned by `target`.
  function stage(target, bytes) {
    const view = target.input(bytes.length);
    view.set(bytes);
    return bytes.length;
  }

  function headerAt(addr, len) {
    return JSON.parse(utf8.decode(mod.HEAPU8.subarray(addr, addr + len)));
  }

  function toText(input) {
    return typeof input === 'string' ? input : input instanceof Uint8Array ? input : JSON.stringify(input);
  }

  function parseMessage(input, sender) {
    const r = mod.wireParseMessage(toText(input), sender);
    if (!r.ok) return { ok: false, drop: { reason: r.reason, field: r.field, detail: r.detail } };
    return { ok: true, type: r.type, message: JSON.parse(r.json), json: r.json };
  }

  const encoder = new TextEncoder();

  class DataFrameStream {
    #inner = new mod.WireDataStream();
    /** Feeds a chunk; returns the frames it completed and, once the stream failed, its error. */
    push(chunk) {
      const n = this.#inner.feed(stage(this.#inner, chunk));
      if (n < 0) return { frames: [], error: frameError(this.#inner.error()) };
      const spans = this.#inner.spans();
      const frames = new Array(n);
      const heap = mod.HEAPU8;
      for (let i = 0; i < n; i++) {
        const s = 4 * i;
        frames[i] = {
          header: headerAt(spans[s], spans[s + 1]),
          payload: heap.slice(spans[s + 2], spans[s + 2] + spans[s + 3]),
        };
      }
      return { frames, error: null };
    }
    /** The stream ended or was reset: reports a frame cut off mid-way. */
    finish() {
      const e = this.#inner.finish();
      return e ? frameError(e) : null;
    }
    get buffered() {
      return this.#inner.buffered();
    }
    close() {
      this.#inner.delete();
    }
  }

  class ControlStream {
    #inner = new mod.WireControlStream();
    #sender;
    /** @param {'robot'|'viewer'|'relay'} sender who writes on this stream */
    constructor(sender) {
      this.#sender = sender;
    }
    /** Returns one parse result per complete message (drops included) and the stream's error. */
    push(chunk) {
      const n = this.#inner.feed(stage(this.#inner, chunk));
      if (n < 0) return { messages: [], error: frameError(this.#inner.error()) };
      const spans = this.#inner.spans();
      const messages = new Array(n);
      for (let i = 0; i < n; i++) {
        const bytes = mod.HEAPU8.slice(spans[2 * i], spans[2 * i] + spans[2 * i + 1]);
        messages[i] = parseMessage(bytes, this.#sender);
      }
      return { messages, error: null };
    }
    finish() {
      const e = this.#inner.finish();
      return e ? frameError(e) : null;
    }
    get buffered() {
      return this.#inner.buffered();
    }
    close() {
      this.#inner.delete();
    }
  }

  return {
    limits,
    errorCodes,
    DataFrameStream,
    ControlStream,

    /** Encodes one data frame. header: {ch, seq, ts, delivery, meta?}. */
    encodeDataFrame(header, payload = new Uint8Array(0)) {
      const n = stage(codec, payload);
      const meta = header.meta === undefined ? '' : JSON.stringify(header.meta);
      const r = codec.dataFrame(String(header.ch), Number(header.seq), Number(header.ts),
        String(header.delivery), meta, n);
      if (typeof r === 'string') return { ok: false, error: frameError(r) };
      return { ok: true, bytes: r.slice() };
    },

    /** Decodes a buffer holding exactly one data frame (one WebSocket message). */
    decodeDataFrame(bytes) {
      const r = codec.decodeFrame(stage(codec, bytes));
      if (typeof r === 'string') return { ok: false, error: frameError(r) };
      return {
        ok: true,
        header: headerAt(r[0], r[1]),
        payload: mod.HEAPU8.slice(r[2], r[2] + r[3]),
      };
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
      const out = codec.controlFrame(r.json);
      if (typeof out === 'string') return { ok: false, error: frameError(out) };
      return { ok: true, bytes: out.slice() };
    },
    /** A validated message as datagram bytes. */
    encodeDatagram(message, sender) {
      const r = parseMessage(message, sender);
      if (!r.ok) return r;
      return { ok: true, bytes: encoder.encode(r.json) };
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
