// The one mailbox endpoint both hosts serve (docs/mailbox.md), as room-host.js is the room's: the
// edge Worker's Durable Object (mailbox-object.js) and the Deno host (web/host/mailbox.js) each
// build one of these per mailbox and only adapt sockets, timers and storage to it. It runs the
// mailbox core under the one driver (web/glue/driver.js): requests in, the core's Persist actions
// applied to the MailboxStore with their results fed back, responses handed to whoever asked,
// pushes written to reader sockets. It decides nothing about the API; the core does.
//
// Why web/edge/mailbox-*.js: the room endpoint already lives in web/edge and the Deno host
// imports it from there (web/host/rooms.js); the mailbox sits beside it and shares its SQL seam
// (room-store.js), so both endpoints of the relay read the same way in one folder.
import { createDriver } from '../glue/driver.js';

/**
 * @typedef {{status: number, body: string, retryAfterMs: number} | {accept: number}} Outcome
 * @typedef {{send(text: string): void, close(code?: number, reason?: string): void}} ReaderSocket
 */

export class MailboxHost {
  /**
   * @param {object} o
   * @param {import('../glue/mailbox.d.ts').MailboxApi} o.api
   * @param {import('./mailbox-store.js').MailboxStore} o.store
   * @param {string} o.mailbox the mailbox's rows in the store ('' in a Durable Object)
   * @param {() => number} [o.now]
   * @param {(fn: () => void, delayMs: number) => unknown} [o.setTimer] a Durable Object's alarm,
   *   the Deno host's sweeper; default setTimeout
   * @param {(handle: unknown) => void} [o.clearTimer]
   * @param {(entry: object) => void} [o.log]
   */
  constructor({ api, store, mailbox, now = Date.now, setTimer, clearTimer, log = defaultLog }) {
    this.api = api;
    this.store = store;
    this.mailbox = mailbox;
    this.now = now;
    this.timer = { setTimer, clearTimer };
    this.log = log;
    this.pending = new Map(); // request id -> resolve(Outcome)
    this.readers = new Map(); // reader id -> { socket: ReaderSocket | null, queue: string[] }
    this.nextRequest = 0;
    this.core = null;
    this.driver = null;
    this.rebuild = false;
    this.boot();
  }

  /** Builds the core from storage alone (start-up, a wake-up, recovery after a failed write). */
  boot() {
    this.close();
    let records;
    try {
      records = this.store.load(this.mailbox);
    } catch (cause) {
      this.log({
        event: 'mailbox load failed',
        mailbox: this.mailbox,
        cause: String(cause?.message ?? cause),
      });
      return false;
    }
    const core = this.api.createCore();
    this.core = core;
    this.broken = false;
    this.rebuild = false;
    this.driver = this.makeDriver(core);
    this.driver.input((now) => {
      for (const [key, value] of records) core.loadRecord(key, value);
      core.loaded(now);
    });
    return true;
  }

  /** The core's answer to one request. */
  request(input) {
    if ((!this.core || this.rebuild) && !this.boot()) {
      return Promise.resolve(
        this.api.errorResponse('storage_failed', "the mailbox's storage could not be read", 1000),
      );
    }
    const id = ++this.nextRequest;
    const answer = new Promise((resolve) => this.pending.set(id, resolve));
    this.driver.input((now) => this.core.handleRequest(id, input, now));
    return answer;
  }

  /** The socket of a reader the core accepted; pushes queued meanwhile go out now. */
  attachReader(reader, socket) {
    const r = this.readers.get(reader);
    if (!r) {
      socket.close(1011, 'the mailbox closed this reader; reconnect');
      return;
    }
    r.socket = socket;
    for (const text of r.queue.splice(0)) sendOrDrop(socket, text);
  }

  readerClosed(reader) {
    if (!this.readers.delete(reader) || !this.core) return;
    this.driver.input((now) => this.core.handleReaderClosed(reader, now));
  }

  /** A socket that outlived the core (hibernation): its reader id, or null to close it. */
  restoreReader(socket) {
    if ((!this.core || this.rebuild) && !this.boot()) return null;
    const reader = this.driver.input((now) => this.core.restoreReader(now));
    if (reader === null) return null;
    this.readers.set(reader, { socket, queue: [] });
    return reader;
  }

  /** The timer fired (a Durable Object alarm that found no driver timer, the Deno sweeper). */
  timeout() {
    if ((!this.core || this.rebuild) && !this.boot()) return;
    this.driver.input((now) => this.core.handleTimeout(now));
  }

  /** After the clock was changed under the driver (tests): one timer at the new delay. */
  retime() {
    if (!this.core) return;
    this.driver.close();
    this.driver = this.makeDriver(this.core);
    this.driver.drain();
  }

  makeDriver(core) {
    return createDriver(
      core,
      { perform: (a) => this.perform(core, a), event: (e) => this.event(e) },
      {
        now: this.now,
        setTimer: this.timer.setTimer,
        clearTimer: this.timer.clearTimer,
        // Whatever was thrown: an Error's message, else the value itself.
        onError: (/** @type {any} */ error, where) =>
          this.log({ event: 'mailbox host error', where, cause: String(error?.message ?? error) }),
      },
    );
  }

  get idle() {
    return this.pending.size === 0 && this.readers.size === 0;
  }

  info() {
    return this.core?.info() ?? null;
  }

  close() {
    this.driver?.close();
    this.core?.dispose();
    this.driver = null;
    this.core = null;
  }

  perform(core, a) {
    switch (a.kind) {
      case 'persist':
        return this.persist(core, a);
      case 'respond': {
        const resolve = this.pending.get(a.request);
        this.pending.delete(a.request);
        resolve?.({ status: a.status, body: a.body, retryAfterMs: a.retryAfterMs });
        return;
      }
      case 'accept': {
        this.readers.set(a.reader, { socket: null, queue: [] });
        const resolve = this.pending.get(a.request);
        this.pending.delete(a.request);
        resolve?.({ accept: a.reader });
        return;
      }
      case 'push': {
        const r = this.readers.get(a.reader);
        if (r?.socket) sendOrDrop(r.socket, a.text);
        else r?.queue.push(a.text);
        return;
      }
      case 'close': {
        const r = this.readers.get(a.reader);
        this.readers.delete(a.reader);
        try {
          r?.socket?.close(a.code, a.reason);
        } catch {
          // already closed
        }
        return;
      }
    }
  }

  // One Persist, applied as one transaction; its result goes back to the core that asked. After a
  // failure no later write of that core is applied: storage keeps what was acknowledged.
  persist(core, a) {
    const answer = (ok) => {
      if (core === this.core) this.driver.input((now) => core.handlePersisted(a.token, ok, now));
    };
    if (this.broken) return answer(false);
    let durable;
    try {
      durable = this.store.apply(this.mailbox, a.puts, a.deletes);
    } catch (cause) {
      this.broken = true;
      this.log({
        event: 'mailbox write failed',
        mailbox: this.mailbox,
        cause: String(cause?.message ?? cause),
      });
      return answer(false);
    }
    durable.then(
      () => answer(!this.broken),
      (cause) => {
        this.broken = true;
        this.log({
          event: 'mailbox sync failed',
          mailbox: this.mailbox,
          cause: String(cause?.message ?? cause),
        });
        answer(false);
      },
    );
  }

  event(e) {
    this.log({ event: `mailbox ${e.kind}`, mailbox: this.mailbox, key: e.key, detail: e.detail });
    if (e.kind === 'storage_failed') this.rebuild = true; // the next input rebuilds from storage
  }
}

function sendOrDrop(socket, text) {
  try {
    socket.send(text);
  } catch {
    // the socket is closing; its close event tells the core
  }
}

function defaultLog(entry) {
  console.error(JSON.stringify(entry));
}
