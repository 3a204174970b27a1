// The hosted mailbox as the agent command line and sidecar reach it (docs/mailbox.md): its HTTP
// API over fetch, and the keys a state dir holds in mailboxes.json (mode 0600). The service
// decides everything (ids, keys, pairing, limits, status); this file sends requests, keeps the
// keys it was given, and turns the service's documented errors into one line naming the fix.
import fs from 'node:fs';
import path from 'node:path';
import { readJson } from './state.js';
import { writeAtomic } from './store.js';

export const MAILBOX_URL_ENV = 'TETHER_MAILBOX_URL';
const MAILBOX_PATH = '/mailboxes/';
const REQUEST_TIMEOUT_MS = 30_000;

/** A refusal from the service (its documented error), or a service that cannot be reached. */
export class MailboxError extends Error {
  constructor(message, { code = null, status = 0, exitCode = 2, body = null } = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.exitCode = exitCode; // 2: refused; 3: cannot connect (the CLI's exit codes)
    this.body = body;
  }
}

/** The keys this state dir holds: mailboxes it owns, mailboxes it may send to. */
export class MailboxCredentials {
  constructor(dir) {
    this.dir = dir;
    this.file = path.join(dir, 'mailboxes.json');
    const d = readJson(this.file);
    this.owned = d?.owned && typeof d.owned === 'object' ? d.owned : {};
    this.paired = d?.paired && typeof d.paired === 'object' ? d.paired : {};
  }
  save() {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeAtomic(
      this.file,
      JSON.stringify({ v: 1, owned: this.owned, paired: this.paired }, null, 2),
    );
  }
}

/**
 * A mailbox named on the command line: a URL (http://HOST:PORT/mailboxes/ID, as `create` and
 * `pair` print it) or an id this state dir knows, with the service URL from the saved keys,
 * --url or $TETHER_MAILBOX_URL. null url when none is known.
 */
export function mailboxRef(ref, creds, url) {
  const s = String(ref ?? '');
  const at = s.indexOf(MAILBOX_PATH);
  if (/^https?:\/\//.test(s) && at > 0) {
    return { id: s.slice(at + MAILBOX_PATH.length).replace(/\/+$/, ''), url: s.slice(0, at) };
  }
  const known = creds.owned[s]?.url ?? creds.paired[s]?.url;
  return { id: s, url: known ?? url ?? null };
}

/** The HTTP API of one mailbox service (its base URL: http://HOST:PORT). */
export class MailboxService {
  constructor(url) {
    this.url = String(url).replace(/\/+$/, '');
  }

  mailboxUrl(id) {
    return `${this.url}${MAILBOX_PATH}${id}`;
  }

  /** The reader stream's ws:// URL. */
  streamUrl(id, since) {
    return `${this.mailboxUrl(id).replace(/^http/, 'ws')}/stream?since=${since}`;
  }

  /**
   * @param {string} method
   * @param {string} p the path under the service's URL
   * @param {{key?: string | null, body?: unknown}} [o] the bearer key; the JSON body
   */
  async request(method, p, { key = null, body } = {}) {
    /** @type {Record<string, string>} */
    const headers = {};
    if (key) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await fetch(`${this.url}${p}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new MailboxError(
        `cannot reach the mailbox service at ${this.url} (${err.cause?.code ?? err.cause?.errors?.[0]?.code ?? err.message}); check the URL and that the service runs`,
        { exitCode: 3 },
      );
    }
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // answered below
    }
    if (json && json.ok === true) return json;
    if (json && typeof json.error === 'string') {
      throw new MailboxError(`${json.error}: ${json.message}; ${json.fix}`, {
        code: json.error,
        status: res.status,
        body: json,
      });
    }
    throw new MailboxError(
      `${this.url} answered ${res.status} without a mailbox reply; is it a tether mailbox service?`,
      { status: res.status, exitCode: 3 },
    );
  }

  create() {
    return this.request('POST', '/mailboxes');
  }
  issueCode(id, ownerKey) {
    return this.request('POST', `${MAILBOX_PATH}${id}/codes`, { key: ownerKey });
  }
  pair(id, { name, code }) {
    return this.request('POST', `${MAILBOX_PATH}${id}/pairs`, {
      body: code ? { name, code } : { name },
    });
  }
  pairs(id, ownerKey) {
    return this.request('GET', `${MAILBOX_PATH}${id}/pairs`, { key: ownerKey });
  }
  accept(id, ownerKey, pair) {
    return this.request('POST', `${MAILBOX_PATH}${id}/pairs/${encodeURIComponent(pair)}/accept`, {
      key: ownerKey,
    });
  }
  unpair(id, ownerKey, pair) {
    return this.request('DELETE', `${MAILBOX_PATH}${id}/pairs/${encodeURIComponent(pair)}`, {
      key: ownerKey,
    });
  }
  send(id, senderKey, message) {
    return this.request('POST', `${MAILBOX_PATH}${id}/messages`, {
      key: senderKey,
      body: message,
    });
  }
  /**
   * @param {string} id
   * @param {string} ownerKey
   * @param {{since?: number, limit?: number}} [range]
   */
  list(id, ownerKey, { since = 0, limit } = {}) {
    const q = new URLSearchParams({ since: String(since) });
    if (limit !== undefined) q.set('limit', String(limit));
    return this.request('GET', `${MAILBOX_PATH}${id}/messages?${q}`, { key: ownerKey });
  }
  ack(id, ownerKey, seqs, status) {
    return this.request('POST', `${MAILBOX_PATH}${id}/ack`, {
      key: ownerKey,
      body: { seqs, status },
    });
  }
  status(id, senderKey, messageId) {
    return this.request('GET', `${MAILBOX_PATH}${id}/status/${encodeURIComponent(messageId)}`, {
      key: senderKey,
    });
  }
}
