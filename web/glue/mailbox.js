// `@tether-rt/tether/mailbox`: the hosted mailbox core for JavaScript (docs/mailbox.md). A thin
// wrapper over src/mailbox: it moves request bytes and the host's random bytes into WASM memory
// and hands back the core's actions and events, in the shape web/glue/driver.js drives. Every
// decision (routes, keys, pairing, limits, retention, status, error bodies) is the core's
// (DESIGN.md rule 4); the hosts that serve it are web/edge/mailbox-host.js and its adapters.
import { loadTetherModule } from './load.js';

/**
 * Loads the mailbox core. In workerd pass { wasmModule } (the imported tether.wasm).
 * @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 * @returns {Promise<import('./mailbox.d.ts').MailboxApi>}
 */
export async function loadMailbox(options) {
  return createMailboxApi(await loadTetherModule(options, 'mailbox'));
}

const EMPTY = new Uint8Array(0);

/** Wraps a loaded module. */
export function createMailboxApi(mod) {
  const limits = Object.freeze(mod.mailboxLimits());
  const errors = Object.freeze(mod.mailboxErrors());

  class MailboxCore {
    #inner = new mod.MailboxCore();

    loadRecord(key, value) {
      return this.#inner.loadRecord(String(key), String(value));
    }
    loaded(nowMs) {
      this.#inner.loaded(nowMs);
    }
    /** One HTTP request: body and entropy as bytes, the rest as the client sent it. */
    handleRequest(requestId, { method, target, authorization = '', body = EMPTY, entropy }, nowMs) {
      const view = this.#inner.stage(body.length + entropy.length);
      view.set(body, 0);
      view.set(entropy, body.length);
      this.#inner.request(
        requestId,
        method,
        target,
        authorization,
        body.length,
        entropy.length,
        nowMs,
      );
    }
    handlePersisted(token, ok, nowMs) {
      this.#inner.persisted(token, ok, nowMs);
    }
    handleReaderClosed(reader, nowMs) {
      this.#inner.readerClosed(reader, nowMs);
    }
    /** A reader socket that outlived the core; null when the core takes no more readers. */
    restoreReader(nowMs) {
      const r = this.#inner.restoreReader(nowMs);
      return r === 0 ? null : r;
    }
    handleTimeout(nowMs) {
      this.#inner.handleTimeout(nowMs);
    }
    pollAction() {
      return this.#inner.pollAction();
    }
    pollEvent() {
      return this.#inner.pollEvent();
    }
    pollTimeout() {
      const t = this.#inner.pollTimeout();
      return t < 0 ? null : t;
    }
    info() {
      return this.#inner.info();
    }
    /** {key: value} of every record the core's state amounts to (what storage must hold). */
    snapshot() {
      return JSON.parse(this.#inner.snapshot());
    }
    dispose() {
      this.#inner.delete();
    }
  }

  return {
    limits,
    errors,
    /** The decision before any body is read: where the request goes, or the error to answer. */
    frontDoor: (method, target, contentLength, websocketUpgrade) =>
      mod.mailboxFrontDoor(method, target, contentLength, websocketUpgrade),
    /** A documented error from the host itself (storage unreadable, ...), in the core's shape. */
    errorResponse: (code, message, retryAfterMs = -1) =>
      mod.mailboxErrorResponse(code, message, retryAfterMs),
    /** The id a create request makes from these random bytes. */
    mailboxIdFor: (entropy) => mod.mailboxIdFor(entropy),
    /** Fresh cryptographic randomness for one request (the core never reads a random source). */
    entropy() {
      const b = new Uint8Array(limits.entropyBytes);
      globalThis.crypto.getRandomValues(b);
      return b;
    },
    createCore: () => new MailboxCore(),
  };
}
