// Hosted mailboxes into the inbox (docs/mailbox.md § Delivery to an agent): for every mailbox this
// state dir owns (mailboxes.json), the sidecar keeps a reader open on the service's stream, stores
// each pushed message in inbox/ as a chat envelope, and only then marks it `delivered` and moves
// its cursor past it. A crash between storing and marking re-delivers the same envelope id, which
// the inbox drops as already stored; so a message is in the inbox exactly once and `delivered`
// means it is on this disk.
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { makeEnvelope } from '../envelope.js';
import { MailboxCredentials, MailboxService } from '../mailbox-client.js';
import { readJson } from '../state.js';
import { writeAtomic } from '../store.js';

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

export class HostedMailboxes {
  /**
   * @param {{dir: string, self: string, mailbox: import('./mailbox.js').Mailbox, log: (s: string) => void}} o
   *   `self` is our stream id (the envelopes' `to`); `mailbox` is the sidecar's inbox.
   */
  constructor({ dir, self, mailbox, log }) {
    this.dir = dir;
    this.self = self;
    this.inbox = mailbox;
    this.log = log;
    this.cursorFile = path.join(dir, 'mailbox-cursors.json');
    this.cursors = readJson(this.cursorFile) ?? {};
    this.readers = new Map(); // mailbox id -> reader state
    this.closed = false;
  }

  start() {
    this.sync();
  }

  /** Opens readers for owned mailboxes not read yet, closes those no longer owned here. */
  sync() {
    const owned = new MailboxCredentials(this.dir).owned;
    for (const [id, entry] of Object.entries(owned)) {
      const r = this.readers.get(id);
      if (!r || r.key !== entry.ownerKey || r.url !== entry.url) {
        r?.stop();
        this.open(id, entry);
      }
    }
    for (const [id, r] of this.readers)
      if (!(id in owned)) {
        r.stop();
        this.readers.delete(id);
      }
    return { ok: true, mailboxes: this.status() };
  }

  status() {
    return [...this.readers.values()].map((r) => ({
      mailbox: r.id,
      url: r.url,
      connected: r.connected,
      cursor: this.cursors[r.id] ?? 0,
      delivered: r.delivered,
      error: r.error,
    }));
  }

  open(id, entry) {
    const service = new MailboxService(entry.url);
    const r = {
      id,
      url: entry.url,
      key: entry.ownerKey,
      connected: false,
      delivered: 0,
      error: null,
      ws: null,
      timer: null,
      retryMs: RETRY_FIRST_MS,
      stopped: false,
      chain: Promise.resolve(), // messages are stored and acknowledged one after another
      stop: () => {
        r.stopped = true;
        clearTimeout(r.timer);
        r.ws?.terminate();
      },
    };
    this.readers.set(id, r);
    const connect = () => {
      if (r.stopped || this.closed) return;
      const ws = new WebSocket(service.streamUrl(id, this.cursors[id] ?? 0), {
        headers: { authorization: `Bearer ${entry.ownerKey}` },
      });
      r.ws = ws;
      let refused = false;
      ws.on('open', () => {
        r.connected = true;
        r.error = null;
        r.retryMs = RETRY_FIRST_MS;
      });
      ws.on('message', (data) => {
        let frame;
        try {
          frame = JSON.parse(String(data));
        } catch {
          return;
        }
        if (frame?.t === 'message')
          r.chain = r.chain.then(() => this.deliver(r, service, frame.message));
      });
      ws.on('unexpected-response', (req, res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => {
          let why = `HTTP ${res.statusCode}`;
          try {
            const j = JSON.parse(body);
            why = `${j.error}: ${j.message}`;
          } catch {}
          r.error = why;
          // A refusal that retrying cannot mend (a bad key, an unknown mailbox) waits for the
          // keys to change (`tether mailbox ...` syncs); overload and outages are retried.
          refused = res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429;
          this.log(`mailbox ${id}: the reader was refused (${why})${refused ? '' : '; retrying'}`);
          ws.terminate();
        });
      });
      ws.on('error', (err) => {
        r.error ??= err.message;
      });
      ws.on('close', () => {
        r.connected = false;
        if (r.stopped || this.closed || refused) return;
        r.timer = setTimeout(connect, r.retryMs);
        r.retryMs = Math.min(RETRY_MAX_MS, r.retryMs * 2);
      });
    };
    connect();
  }

  // Stored first, marked delivered second, cursor last: each step only after the one before held.
  async deliver(r, service, m) {
    if (r.stopped || m.seq <= (this.cursors[r.id] ?? 0)) return;
    const made = makeEnvelope({
      id: `${r.id}:${m.seq}`,
      type: 'chat',
      from: {
        streamId: `mailbox:${m.from.pair}`,
        role: 'mailbox',
        name: m.from.name,
        instanceId: r.id,
      },
      to: this.self,
      ts: m.storedAt,
      payload: {
        text: m.text,
        mailbox: { id: r.id, seq: m.seq, messageId: m.id, pair: m.from.pair, storedAt: m.storedAt },
      },
    });
    if (!made.ok) {
      this.log(
        `mailbox ${r.id}: message ${m.seq} is not a valid envelope (${made.field}: ${made.detail}); left unread`,
      );
      return;
    }
    this.inbox.store(made.env, null);
    try {
      await service.ack(r.id, r.key, [m.seq], 'delivered');
    } catch (err) {
      // Stored but not marked: the next connection re-sends it, and the inbox keeps one copy.
      r.error = err.message;
      this.log(`mailbox ${r.id}: could not mark message ${m.seq} delivered (${err.message})`);
      r.ws?.terminate();
      return;
    }
    r.delivered++;
    this.cursors[r.id] = Math.max(this.cursors[r.id] ?? 0, m.seq);
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeAtomic(this.cursorFile, JSON.stringify(this.cursors));
  }

  rpcHandlers() {
    return {
      'mailbox-sync': () => this.sync(),
      'mailbox-readers': () => ({ ok: true, mailboxes: this.status() }),
    };
  }

  close() {
    this.closed = true;
    for (const r of this.readers.values()) r.stop();
  }
}
