// The hosted mailbox at the edge (docs/mailbox.md § Hosting): one SQLite-backed Durable Object per
// mailbox, named by the mailbox id, holding the shared mailbox endpoint (mailbox-host.js) over
// ctx.storage.sql, its alarm and hibernatable reader WebSockets. routeMailbox is the Worker's
// side: the core's front door runs in the Worker, which then forwards the request to the object
// of that mailbox with the random bytes the core will use (a create's id is made from them, so
// the Worker knows which object to ask before the mailbox exists).
//
// Expiry: the driver's one timer is the object's alarm, so text is purged at seven days even
// when the object is not in memory; a wake-up rebuilds the core from storage first.
import { MailboxHost } from './mailbox-host.js';
import { MailboxStore } from './mailbox-store.js';
import { durableObjectSql } from './room-store.js';
import {
  bytesOfHex,
  hexOf,
  isMailboxPath,
  outcomeResponse,
  readBounded,
  readMailboxRequest,
} from './mailbox-request.js';

export const HEADER_ENTROPY = 'X-Tether-Entropy';
const TEST_PREFIX = '/__test/mailboxes/';

/**
 * The Worker's mailbox routes: null when the request is not the mailbox endpoint's, otherwise the
 * response (from the front door, or from the mailbox's object).
 * @param {() => Promise<import('../glue/mailbox.d.ts').MailboxApi>} load
 */
export function routeMailbox(request, env, load) {
  const url = new URL(request.url);
  const hook = env.TETHER_TEST_HOOKS === '1' && url.pathname.startsWith(TEST_PREFIX);
  if (!hook && !isMailboxPath(url.pathname)) return null;
  if (!env.MAILBOXES) {
    return new Response(
      'the MAILBOXES Durable Object binding is missing: add it to wrangler.toml\n',
      {
        status: 500,
      },
    );
  }
  if (hook) {
    // Test-only (TETHER_TEST_HOOKS=1, never deployed): /__test/mailboxes/<id>/<hook>.
    const [id, ...rest] = url.pathname.slice(TEST_PREFIX.length).split('/');
    return env.MAILBOXES.get(env.MAILBOXES.idFromName(id)).fetch(
      new Request(`https://mailbox/__test/${rest.join('/')}${url.search}`, {
        method: request.method,
      }),
    );
  }
  return load().then(async (api) => {
    const r = await readMailboxRequest(request, api);
    if ('response' in r) return r.response;
    const headers = new Headers({ [HEADER_ENTROPY]: hexOf(r.input.entropy) });
    if (r.input.authorization) headers.set('authorization', r.input.authorization);
    if (r.upgrade) headers.set('upgrade', 'websocket');
    const hasBody = r.input.method !== 'GET' && r.input.method !== 'HEAD';
    const stub = env.MAILBOXES.get(env.MAILBOXES.idFromName(r.mailbox));
    return stub.fetch(
      new Request(`https://mailbox${r.input.target}`, {
        method: r.input.method,
        headers,
        // The request's own bytes (readBounded): never a shared buffer.
        body: hasBody ? /** @type {Uint8Array<ArrayBuffer>} */ (r.input.body) : null,
      }),
    );
  });
}

/** @param {{init: (env) => Promise<import('../glue/mailbox.d.ts').MailboxApi>}} o */
export function defineMailboxObject({ init }) {
  return class MailboxObject {
    constructor(ctx, env) {
      this.ctx = ctx;
      this.env = env;
      this.testHooks = env.TETHER_TEST_HOOKS === '1';
      this.clock = null; // tests only: a frozen clock
      /** @type {MailboxStore | undefined} made on the first boot, kept across re-boots */
      this.store = undefined;
      this.alarmFn = null;
      this.wakes = 0;
      ctx.blockConcurrencyWhile(() => this.boot());
    }

    async boot() {
      this.api = await init(this.env);
      this.store ??= new MailboxStore(durableObjectSql(this.ctx.storage));
      this.host?.close();
      this.sockets = new Map(); // WebSocket -> reader id
      this.host = new MailboxHost({
        api: this.api,
        store: this.store,
        mailbox: '',
        now: () => this.clock ?? Date.now(),
        // The driver's one timer is the object's one alarm (real time: the delay it asks for).
        setTimer: (fn, delayMs) => {
          this.alarmFn = fn;
          this.ctx.storage.setAlarm(Date.now() + delayMs).catch(logAlarmError);
          return 1;
        },
        clearTimer: () => {
          this.alarmFn = null;
          this.ctx.storage.deleteAlarm().catch(logAlarmError);
        },
      });
      this.wakes++;
      // Readers that outlived the object (hibernation) get pushes again.
      for (const ws of this.ctx.getWebSockets()) {
        const reader = this.host.restoreReader(socketOf(ws));
        if (reader === null)
          ws.close(1011, 'the mailbox could not take this reader back; reconnect');
        else this.sockets.set(ws, reader);
      }
    }

    async fetch(request) {
      const url = new URL(request.url);
      if (this.testHooks && url.pathname.startsWith('/__test/')) return this.testHook(url);
      const hex = request.headers.get(HEADER_ENTROPY);
      const outcome = await this.host.request({
        method: request.method,
        target: url.pathname + url.search,
        authorization: request.headers.get('authorization') ?? '',
        body: await readBounded(request, this.api.limits.maxRequestBytes + 1),
        entropy: hex ? bytesOfHex(hex) : this.api.entropy(),
      });
      if (!('accept' in outcome)) return outcomeResponse(outcome);
      const [client, server] = Object.values(new WebSocketPair());
      this.ctx.acceptWebSocket(server);
      this.sockets.set(server, outcome.accept);
      this.host.attachReader(outcome.accept, socketOf(server));
      return new Response(null, { status: 101, webSocket: client });
    }

    async alarm() {
      const fire = this.alarmFn;
      this.alarmFn = null;
      if (fire) fire();
      else this.host.timeout();
    }

    webSocketMessage() {
      // Readers only listen; acks go through POST .../ack.
    }

    webSocketClose(ws, code) {
      this.dropSocket(ws);
      try {
        ws.close(code === 1005 ? 1000 : code, 'bye');
      } catch {
        // already closed
      }
    }

    webSocketError(ws) {
      this.dropSocket(ws);
    }

    dropSocket(ws) {
      const reader = this.sockets.get(ws);
      this.sockets.delete(ws);
      if (reader !== undefined) this.host.readerClosed(reader);
    }

    // Test-only (TETHER_TEST_HOOKS=1): a frozen clock, the alarm, a wake-up from storage, and a
    // storage fault through a real SQLite trigger.
    async testHook(url) {
      const p = url.searchParams;
      switch (url.pathname) {
        case '/__test/clock':
          this.clock = p.get('at') ? Number(p.get('at')) : null;
          this.host.retime();
          return Response.json({ now: this.host.now(), alarm: await this.ctx.storage.getAlarm() });
        case '/__test/info': {
          const stored = Object.fromEntries(this.store.load(''));
          const snapshot = this.host.core?.snapshot() ?? null;
          return Response.json({
            info: this.host.info(),
            wakes: this.wakes,
            alarm: await this.ctx.storage.getAlarm(),
            now: this.host.now(),
            storageMatchesCore: JSON.stringify(snapshot) === JSON.stringify(stored),
            records: Object.keys(stored).length,
          });
        }
        case '/__test/evict':
          // What hibernation does to memory: the core is gone; storage and sockets survive.
          this.alarmFn = null;
          await this.boot();
          return Response.json({ ok: true, wakes: this.wakes, readers: this.sockets.size });
        case '/__test/fail-storage':
          this.ctx.storage.sql.exec(
            `CREATE TRIGGER IF NOT EXISTS tether_test_fail BEFORE INSERT ON tether_mailbox BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END`,
          );
          return Response.json({ ok: true });
        case '/__test/heal-storage':
          this.ctx.storage.sql.exec('DROP TRIGGER IF EXISTS tether_test_fail');
          return Response.json({ ok: true });
        default:
          return new Response('unknown test hook\n', { status: 404 });
      }
    }
  };
}

function socketOf(ws) {
  return {
    send: (text) => ws.send(text),
    close: (code, reason) => ws.close(code, reason),
  };
}

function logAlarmError(cause) {
  console.error(
    JSON.stringify({ event: 'mailbox alarm failed', cause: String(cause?.message ?? cause) }),
  );
}
