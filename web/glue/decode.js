// `tether/decode`: the cockpit's decoders (costmap, voxels, JPEG checks, JSON encodings) from the
// C++ decode core. Results are views of WASM memory, not copies: read them (or copy them) before
// the next call into the module. Failures are values; a failed frame keeps the last good value.
import { loadTetherModule } from './load.js';

/** @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options] */
export async function loadDecode(options) {
  return createDecode(await loadTetherModule(options, 'decode'));
}

export function createDecode(mod) {
  const errorTexts = mod.decodeErrorTexts();

  class ChannelDecoder {
    #inner;
    #kind;
    /** @param {string} encoding the channel's manifest encoding, e.g. "costmap.zlib.v1" */
    constructor(encoding) {
      this.#inner = new mod.DecodeChannel(String(encoding));
      this.#kind = this.#inner.kind();
    }
    /** 'jpeg' | 'costmap' | 'voxels' | 'pose' | 'json' | 'track' | 'unsupported' */
    get kind() {
      return this.#kind;
    }
    /** Decodes one frame's payload with its header meta. */
    decode(meta, payload) {
      const staged = this.#inner.input(payload.length);
      staged.set(payload);
      const e = this.#inner.decode(
        meta === undefined || meta === null ? '' : JSON.stringify(meta),
        payload.length,
      );
      return e ? { ok: false, error: { code: e, message: errorTexts[e] } } : { ok: true };
    }
    get frames() {
      return this.#inner.frames();
    }
    get errors() {
      return this.#inner.errors();
    }
    get lastError() {
      return this.#inner.lastError() || null;
    }
    /** The last good value, shaped by kind; null before the first good frame. */
    get value() {
      if (!this.#inner.hasValue()) return null;
      switch (this.#kind) {
        case 'costmap': {
          const meta = this.#inner.costmapMeta();
          const rgba = this.#inner.rgba();
          return {
            meta,
            cells: this.#inner.cells(),
            // Ready for new ImageData(value.rgba, meta.w, meta.h): row 0 is world max-y.
            rgba: new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.length),
          };
        }
        case 'voxels':
          return { positions: this.#inner.positions(), colours: this.#inner.colours() };
        case 'jpeg':
          return { meta: this.#inner.jpegMeta(), bytes: this.#inner.jpeg() };
        case 'pose':
        case 'json':
          return JSON.parse(this.#inner.json());
        default:
          return null;
      }
    }
    close() {
      this.#inner.delete();
    }
  }

  return {
    ChannelDecoder,
    encodingKind: (encoding) => mod.decodeEncodingKind(String(encoding)),
    errorTexts,
  };
}
