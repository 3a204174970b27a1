// The self-hosted twin of the edge mailbox (docs/mailbox.md § Hosting): the same endpoint
// (web/edge/mailbox-request.js, mailbox-host.js), the same core and records, over Deno.serve and
// one SQLite file (node:sqlite, WAL, synchronous=FULL: a write that returned is on disk, so a
// `stored` answer never precedes its write). Where the edge has one Durable Object per mailbox,
// this process keeps a bounded set of mailboxes loaded (least recently used leave first) and one
// sweeper timer over the deadlines every mailbox stored, so a mailbox that is not in memory still
// has its text deleted at seven days, across restarts too.
//
// Run: deno run --allow-net=127.0.0.1 --allow-read --allow-write=DIR web/host/mailbox.js
//        --db DIR/mailbox.sqlite [--port 8788] [--hostname 127.0.0.1] [--max-loaded 256]
// createMailboxService is the same service without the listener, to mount beside another one.
import { DatabaseSync } from 'node:sqlite';
import { loadMailbox } from '../glue/mailbox.js';
import { MailboxHost } from '../edge/mailbox-host.js';
import { MailboxStore } from '../edge/mailbox-store.js';
import { outcomeResponse, readMailboxRequest } from '../edge/mailbox-request.js';
import { sqliteSql } from '../edge/room-store.js';

const SWEEP_BATCH = 64; // mailboxes woken per sweeper turn; the rest follow at once, in turns
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * One timer over every mailbox's next deadline, kept in the store (tether_mailbox_due) so that
 * deadlines of mailboxes not in memory, or of a process that died, are still met. Each loaded
 * mailbox's driver uses timerFor(mailbox) as its timer.
 */
class Sweeper {
  constructor(store, now, wake, log) {
    this.store = store;
    this.now = now;
    this.wake = wake; // (mailbox) => loads it and lets it handle its timeout
    this.log = log;
    this.fns = new Map(); // mailbox -> the driver's fire, for loaded mailboxes
    this.timer = null;
    this.at = Infinity;
  }

  timerFor(mailbox) {
    return {
      setTimer: (fn, delayMs) => {
        this.fns.set(mailbox, fn);
        this.store.setDue(mailbox, this.now() + delayMs);
        this.arm();
        return mailbox;
      },
      clearTimer: () => {
        this.fns.delete(mailbox);
        this.store.setDue(mailbox, null);
      },
    };
  }

  arm() {
    const at = this.store.nextDue();
    if (at === null || (this.timer !== null && this.at <= at)) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.at = at;
    this.timer = setTimeout(
      () => this.fire(),
      Math.max(0, Math.min(at - this.now(), MAX_DELAY_MS)),
    );
  }

  fire() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.at = Infinity;
    for (const mailbox of this.store.dueBy(this.now(), SWEEP_BATCH)) {
      const fn = this.fns.get(mailbox);
      this.fns.delete(mailbox);
      this.store.setDue(mailbox, null); // its driver sets the next one
      try {
        if (fn) fn();
        else this.wake(mailbox);
      } catch (cause) {
        this.log({
          event: 'mailbox sweep failed',
          mailbox,
          cause: String(cause?.message ?? cause),
        });
      }
    }
    this.arm();
  }

  close() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * @param {object} o
 * @param {DatabaseSync} o.db
 * @param {import('../glue/mailbox.d.ts').MailboxApi} o.api
 * @param {() => number} [o.now]
 * @param {number} [o.maxLoaded] mailboxes kept in memory at once
 * @param {(entry: object) => void} [o.log] one JSON-able record per event
 */
export function createMailboxService({
  db,
  api,
  now = Date.now,
  maxLoaded = 256,
  log = defaultLog,
}) {
  const store = new MailboxStore(sqliteSql(db));
  const sites = new Map(); // mailbox -> MailboxHost, least recently used first
  const sweeper = new Sweeper(
    store,
    () => now(),
    (mailbox) => open(mailbox).timeout(),
    log,
  );

  function open(mailbox) {
    let site = sites.get(mailbox);
    if (site) {
      sites.delete(mailbox);
      sites.set(mailbox, site);
      return site;
    }
    site = new MailboxHost({ api, store, mailbox, now, log, ...sweeper.timerFor(mailbox) });
    sites.set(mailbox, site);
    for (const [m, s] of sites) {
      if (sites.size <= maxLoaded) break;
      if (s !== site && s.idle) unload(m, s);
    }
    return site;
  }

  // Out of memory, not out of mind: its next deadline stays in the store for the sweeper.
  function unload(mailbox, site) {
    const at = site.core?.pollTimeout() ?? null;
    sites.delete(mailbox);
    site.close();
    store.setDue(mailbox, at);
    sweeper.arm();
  }

  async function handle(request) {
    const r = await readMailboxRequest(request, api);
    if ('response' in r) return r.response;
    const site = open(r.mailbox);
    const outcome = await site.request(r.input);
    if ('accept' in outcome) return upgrade(request, site, outcome.accept);
    if (!site.info()?.exists && site.idle) unload(r.mailbox, site); // nothing to keep loaded
    return outcomeResponse(outcome);
  }

  function upgrade(request, site, reader) {
    let socket, response;
    try {
      ({ socket, response } = Deno.upgradeWebSocket(request));
    } catch (cause) {
      site.readerClosed(reader);
      return outcomeResponse(
        api.errorResponse('upgrade_required', String(cause?.message ?? cause)),
      );
    }
    socket.onopen = () =>
      site.attachReader(reader, {
        send: (text) => socket.send(text),
        close: (code, reason) => socket.close(code, reason),
      });
    socket.onclose = () => site.readerClosed(reader);
    socket.onerror = () => site.readerClosed(reader);
    return response;
  }

  sweeper.arm(); // deadlines that passed while the process was down are met now
  return {
    handle,
    store,
    sweeper,
    sites,
    open,
    unload,
    close() {
      for (const [m, s] of sites) unload(m, s);
      sweeper.close();
    },
  };
}

function defaultLog(entry) {
  console.error(JSON.stringify(entry));
}

// ---- the standalone server -----------------------------------------------------------------

async function main() {
  const flags = { port: 8788, db: '', hostname: '127.0.0.1', maxLoaded: 256, testHooks: false };
  for (let i = 0; i < Deno.args.length; i++) {
    const a = Deno.args[i];
    const next = () => Deno.args[++i];
    if (a === '--port') flags.port = Number(next());
    else if (a === '--db') flags.db = next();
    else if (a === '--hostname') flags.hostname = next();
    else if (a === '--max-loaded') flags.maxLoaded = Number(next());
    else if (a === '--test-hooks') flags.testHooks = true;
    else {
      console.error(`tether mailbox: unknown flag ${a}; see the header of web/host/mailbox.js`);
      Deno.exit(2);
    }
  }
  if (!flags.db) {
    console.error('tether mailbox: --db FILE is required (the SQLite file holding every mailbox)');
    Deno.exit(2);
  }
  if (!(flags.maxLoaded >= 1)) {
    console.error('tether mailbox: --max-loaded must be a whole number, 1 or more');
    Deno.exit(2);
  }
  let clock = null; // tests only (--test-hooks): a frozen clock
  const db = new DatabaseSync(flags.db);
  const api = await loadMailbox();
  const service = createMailboxService({
    db,
    api,
    now: () => clock ?? Date.now(),
    maxLoaded: flags.maxLoaded,
  });

  // Test-only (--test-hooks): the same hooks as the Worker's, on /__test/mailboxes/<id>/<hook>.
  function testHook(url) {
    const [id, hook] = url.pathname.slice('/__test/mailboxes/'.length).split('/');
    switch (hook) {
      case 'clock':
        clock = url.searchParams.get('at') ? Number(url.searchParams.get('at')) : null;
        // The sweeper's timer, re-armed at the new time, does what is due (as the alarm does).
        service.sweeper.close();
        service.sweeper.arm();
        return Response.json({ now: clock ?? Date.now(), alarm: service.store.nextDue() });
      case 'info': {
        const loaded = service.sites.get(id);
        const stored = Object.fromEntries(service.store.load(id));
        const snapshot = loaded?.core?.snapshot() ?? null;
        return Response.json({
          // Not loaded: what its stored records hold, read by a core that is not told the time
          // (so reading it expires nothing).
          info: loaded?.info() ?? probe(stored),
          loaded: Boolean(loaded),
          alarm: service.store.nextDue(),
          storageMatchesCore: loaded ? JSON.stringify(snapshot) === JSON.stringify(stored) : null,
          records: Object.keys(stored).length,
        });
      }
      case 'evict': {
        const site = service.sites.get(id);
        if (site) service.unload(id, site);
        return Response.json({ ok: true });
      }
      case 'fail-storage':
        db.exec(
          `CREATE TRIGGER IF NOT EXISTS tether_test_fail BEFORE INSERT ON tether_mailbox BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END`,
        );
        return Response.json({ ok: true });
      case 'heal-storage':
        db.exec('DROP TRIGGER IF EXISTS tether_test_fail');
        return Response.json({ ok: true });
      default:
        return new Response('unknown test hook\n', { status: 404 });
    }
  }

  function probe(records) {
    const core = api.createCore();
    for (const [k, v] of Object.entries(records)) core.loadRecord(k, v);
    const info = core.info();
    core.dispose();
    return info;
  }

  const server = Deno.serve(
    { hostname: flags.hostname, port: flags.port, onListen: () => {} },
    (req) => {
      const url = new URL(req.url);
      if (flags.testHooks && url.pathname.startsWith('/__test/mailboxes/')) return testHook(url);
      return service.handle(req);
    },
  );
  console.log(
    `tether mailbox ready: http://${flags.hostname}:${server.addr.port}/mailboxes (db ${flags.db})`,
  );
}

if (import.meta.main) await main();
