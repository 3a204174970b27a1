// The hosted mailbox's end-to-end scenarios (docs/mailbox.md), run unchanged against both hosts:
// the edge Worker under real workerd (edge-mailbox.test.mjs) and the Deno host on a SQLite file
// (deno-mailbox.test.mjs). Clients speak plain HTTP and WebSocket, as users do; the test hooks
// only freeze the host's clock, look at what the host holds, evict a mailbox from memory and
// inject a storage fault.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import http from 'node:http';
import WebSocket from 'ws';
import { loadMailbox } from '@tether-rt/tether/mailbox';
import { until } from './edge.mjs';

const DAY = 24 * 60 * 60 * 1000;

/** The HTTP API as a client sees it: status, headers and parsed JSON of every answer. */
export class MailboxApiClient {
  constructor(host) {
    this.host = host;
  }
  async call(method, path, { auth, body, rawBody, headers = {} } = {}) {
    const h = { ...headers };
    if (auth) h.authorization = auth;
    const res = await fetch(`${this.host.url}${path}`, {
      method,
      headers: h,
      body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // asserted by the caller
    }
    return { status: res.status, headers: res.headers, json, text };
  }
  /**
   * One request on a connection of its own, closed after the answer. A body refused by its
   * declared length is never read, and a server that closes a socket holding unread bytes resets
   * it (TCP RST): fetch's pooled connection would carry that reset into the next request.
   */
  async callAlone(method, path, { auth, rawBody }) {
    const url = new URL(path, this.host.url);
    return new Promise((resolve, reject) => {
      let answered = false;
      const req = http.request(
        url,
        { method, agent: false, headers: auth ? { authorization: auth } : {} },
        (res) => {
          answered = true;
          const parts = [];
          res.on('data', (d) => parts.push(d));
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            let json = null;
            try {
              json = JSON.parse(text);
            } catch {
              // asserted by the caller
            }
            resolve({ status: res.statusCode, headers: new Headers(res.headers), json, text });
          });
          res.on('error', reject);
        },
      );
      // Once answered, the reset of the unread rest of the body is expected; before, it is a failure.
      req.on('error', (err) => {
        if (!answered) reject(err);
      });
      req.end(rawBody);
    });
  }
  async create() {
    const r = await this.call('POST', '/mailboxes');
    assert.equal(r.status, 201, r.text);
    return {
      id: r.json.mailbox,
      owner: `Bearer ${r.json.ownerKey}`,
      base: `/mailboxes/${r.json.mailbox}`,
    };
  }
  async code(box) {
    const r = await this.call('POST', `${box.base}/codes`, { auth: box.owner });
    assert.equal(r.status, 201, r.text);
    return r.json.code;
  }
  pairRequest(box, name, code) {
    return this.call('POST', `${box.base}/pairs`, { body: code ? { name, code } : { name } });
  }
  async paired(box, name) {
    const r = await this.pairRequest(box, name, await this.code(box));
    assert.equal(r.status, 201, r.text);
    return { pair: r.json.pair, auth: `Bearer ${r.json.senderKey}` };
  }
  send(box, sender, id, text) {
    return this.call('POST', `${box.base}/messages`, { auth: sender.auth, body: { id, text } });
  }
  list(box, since = 0) {
    return this.call('GET', `${box.base}/messages?since=${since}`, { auth: box.owner });
  }
  ack(box, seqs, status) {
    return this.call('POST', `${box.base}/ack`, { auth: box.owner, body: { seqs, status } });
  }
  status(box, sender, id) {
    return this.call('GET', `${box.base}/status/${encodeURIComponent(id)}`, { auth: sender.auth });
  }
}

/**
 * A reader: a WebSocket on .../stream with the owner key; collects the frames pushed to it.
 */
export function openReader(host, box, since = 0) {
  const ws = new WebSocket(`${host.wsUrl}${box.base}/stream?since=${since}`, {
    headers: { authorization: box.owner },
  });
  const reader = { ws, frames: [], closed: null, status: null };
  ws.on('message', (d) => reader.frames.push(JSON.parse(String(d))));
  ws.on('close', (code) => (reader.closed ??= { code }));
  ws.on('unexpected-response', (req, res) => (reader.status = res.statusCode));
  ws.on('error', () => {});
  reader.close = async () => {
    if (ws.readyState === WebSocket.CLOSED) return;
    const done = new Promise((r) => ws.once('close', r));
    ws.close();
    await done;
  };
  return reader;
}

/**
 * Registers the scenarios.
 * @param {string} label
 * @param {object} o
 * @param {() => Promise<Host>} o.start a host on fresh or persisted storage
 * @param {boolean} o.sharedStorage one storage for every mailbox (a storage fault hits them all)
 * Host: { url, wsUrl, hook(mailbox, name, query?) -> json, stop() }
 */
export function mailboxScenarios(label, { start, sharedStorage }) {
  let host;
  let api;
  let errors;
  const client = () => new MailboxApiClient(host);

  // A documented error: the status and code the core's table gives, a message and the fix.
  function assertError(r, code) {
    assert.ok(r.json, `a JSON body, got ${r.text}`);
    assert.equal(r.json.ok, false, r.text);
    assert.equal(r.json.error, code, r.text);
    assert.equal(r.status, errors[code].status, r.text);
    assert.equal(r.json.fix, errors[code].fix);
    assert.ok(r.json.message.length > 0);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  }

  before(async () => {
    api = await loadMailbox();
    errors = api.errors;
    host = await start();
  });
  after(async () => {
    await host?.stop();
  });

  test(
    `${label} mailbox: pairing gates sends; pairings are listed and revoked`,
    { timeout: 60_000 },
    async () => {
      const c = client();
      const box = await c.create();
      assertError(await c.send(box, { auth: '' }, 'm1', 'no key'), 'unpaired_sender');
      const req = await c.pairRequest(box, 'bob');
      assert.equal(req.status, 201, req.text);
      assert.equal(req.json.state, 'pending');
      const bob = { pair: req.json.pair, auth: `Bearer ${req.json.senderKey}` };
      assertError(await c.send(box, bob, 'm1', 'too early'), 'unpaired_sender');
      const pairs = await c.call('GET', `${box.base}/pairs`, { auth: box.owner });
      assert.deepEqual(
        pairs.json.pairs.map((p) => [p.name, p.state]),
        [['bob', 'pending']],
      );
      const acc = await c.call('POST', `${box.base}/pairs/${bob.pair}/accept`, { auth: box.owner });
      assert.equal(acc.json.pair.state, 'active');
      assert.equal((await c.send(box, bob, 'm1', 'hello')).status, 201);
      const alice = await c.paired(box, 'alice');
      assert.equal((await c.send(box, alice, 'a1', 'hi')).status, 201);
      const del = await c.call('DELETE', `${box.base}/pairs/${bob.pair}`, { auth: box.owner });
      assert.equal(del.json.pair.state, 'revoked');
      const revoked = await c.send(box, bob, 'm2', 'after revoke');
      assertError(revoked, 'unpaired_sender');
      assert.match(revoked.json.message, /revoked/);
      assert.equal((await c.send(box, alice, 'a2', 'still paired')).status, 201);
      const texts = (await c.list(box)).json.messages.map((m) => m.text);
      assert.deepEqual(texts, ['hello', 'hi', 'still paired']);
    },
  );

  test(
    `${label} mailbox: a resend with the same id stores one message`,
    { timeout: 60_000 },
    async () => {
      const c = client();
      const box = await c.create();
      const s = await c.paired(box, 'bob');
      const first = await c.send(box, s, 'same-id', 'once');
      assert.equal(first.status, 201);
      for (let i = 0; i < 3; i++) {
        const again = await c.send(box, s, 'same-id', 'once');
        assert.equal(again.status, 200);
        assert.equal(again.json.duplicate, true);
        assert.equal(again.json.seq, first.json.seq);
      }
      const listed = (await c.list(box)).json.messages;
      assert.equal(listed.length, 1);
      assert.equal(listed[0].text, 'once');
      assertError(await c.send(box, s, 'same-id', 'twice'), 'id_conflict');
      const info = await host.hook(box.id, 'info');
      assert.equal(info.info.storedMessages, 1);
      assert.equal(info.storageMatchesCore, true);
    },
  );

  test(
    `${label} mailbox: status moves stored, delivered, read; a connected reader gets it pushed`,
    { timeout: 60_000 },
    async () => {
      const c = client();
      const box = await c.create();
      const s = await c.paired(box, 'bob');
      await c.send(box, s, 'early', 'before the reader');
      const reader = openReader(host, box, 0);
      await until(() => reader.frames.some((f) => f.t === 'ready'), 'ready');
      assert.deepEqual(
        reader.frames.map((f) => f.t),
        ['message', 'ready'],
      );
      assert.equal(reader.frames[0].message.text, 'before the reader');
      const sent = await c.send(box, s, 'm1', 'pushed');
      assert.equal((await c.status(box, s, 'm1')).json.status, 'stored');
      await until(() => reader.frames.length === 3, 'the live push');
      const pushed = reader.frames[2];
      assert.equal(pushed.t, 'message');
      assert.equal(pushed.message.seq, sent.json.seq);
      assert.equal(pushed.message.from.name, 'bob');
      assert.equal(pushed.message.text, 'pushed');
      await c.ack(box, [sent.json.seq], 'delivered');
      const delivered = (await c.status(box, s, 'm1')).json;
      assert.equal(delivered.status, 'delivered');
      assert.ok(delivered.deliveredAt >= delivered.storedAt);
      await c.ack(box, [sent.json.seq], 'read');
      const read = (await c.status(box, s, 'm1')).json;
      assert.equal(read.status, 'read');
      assert.ok(read.readAt >= read.deliveredAt);
      // Read text leaves the mailbox; the status stays and never moves back.
      assert.deepEqual(
        (await c.list(box)).json.messages.map((m) => m.id),
        ['early'],
      );
      assert.deepEqual((await c.ack(box, [sent.json.seq], 'delivered')).json.unchanged, [
        sent.json.seq,
      ]);
      assert.equal((await c.status(box, s, 'm1')).json.status, 'read');
      // A reader without the owner key is refused before any socket opens.
      const stranger = openReader(host, { ...box, owner: s.auth }, 0);
      await until(() => stranger.status !== null || stranger.closed, 'refusal');
      assert.equal(stranger.status, 401);
      await reader.close();
    },
  );

  test(
    `${label} mailbox: retention with an injected clock deletes at seven days, not before`,
    { timeout: 60_000 },
    async () => {
      const c = client();
      const box = await c.create();
      const s = await c.paired(box, 'bob');
      const t0 = Date.now() + 60_000; // frozen ahead of every stamp the mailbox already holds
      try {
        await host.hook(box.id, 'clock', { at: t0 });
        const sent = await c.send(box, s, 'm1', 'lasts a week');
        assert.equal(sent.json.storedAt, t0);
        assert.equal(sent.json.expiresAt, t0 + 7 * DAY);
        await c.send(box, s, 'keep', 'read it');
        await c.ack(box, [sent.json.seq + 1], 'delivered');
        // One millisecond before: the host's timer may run, the text stays.
        await host.hook(box.id, 'clock', { at: t0 + 7 * DAY - 1 });
        assert.equal((await c.list(box)).json.messages.length, 2);
        assert.equal((await c.status(box, s, 'm1')).json.status, 'stored');
        // Out of memory meanwhile (hibernation, or the Deno host unloading it): the deadline holds.
        await host.hook(box.id, 'evict');
        // At seven days the host's own timer deletes it: no request asks for it.
        await host.hook(box.id, 'clock', { at: t0 + 7 * DAY });
        const gone = await until(async () => {
          const i = await host.hook(box.id, 'info');
          return i.info?.storedMessages === 0 ? i : null;
        }, 'the expiry sweep');
        assert.equal(gone.storageMatchesCore, true);
        assert.equal(gone.records, 4, 'meta, pairing and the two status records');
        assert.equal((await c.list(box)).json.messages.length, 0);
        assert.equal((await c.status(box, s, 'm1')).json.status, 'expired');
        assert.equal((await c.status(box, s, 'keep')).json.status, 'delivered');
      } finally {
        await host.hook(box.id, 'clock', {});
      }
    },
  );

  test(`${label} mailbox: a restart loses no stored message`, { timeout: 120_000 }, async () => {
    const c = client();
    const box = await c.create();
    const s = await c.paired(box, 'bob');
    const code = await c.code(box);
    const seqs = [];
    for (let i = 0; i < 12; i++) seqs.push((await c.send(box, s, `m${i}`, `text ${i}`)).json.seq);
    await c.ack(box, [seqs[1]], 'delivered');
    await c.ack(box, [seqs[2]], 'read');
    const before = (await c.list(box)).json;
    await host.stop();
    host = await start();
    const c2 = client();
    assert.deepEqual((await c2.list(box)).json, before);
    assert.equal((await c2.status(box, s, 'm1')).json.status, 'delivered');
    assert.equal((await c2.status(box, s, 'm2')).json.status, 'read');
    assert.equal((await c2.send(box, s, 'm3', 'text 3')).json.duplicate, true);
    assert.equal((await c2.send(box, s, 'm12', 'after')).json.seq, seqs[11] + 1);
    assert.equal((await c2.pairRequest(box, 'carol', code)).status, 201);
  });

  test(
    `${label} mailbox: oversize, unknown mailbox, unpaired sender, bad key and flood each get their documented error; other mailboxes keep working`,
    { timeout: 60_000 },
    async () => {
      const c = client();
      const box = await c.create();
      const other = await c.create();
      const s = await c.paired(box, 'bob');
      const calm = await c.paired(box, 'calm');
      const o = await c.paired(other, 'olga');
      let n = 0;
      const othersWork = async () => {
        assert.equal((await c.send(other, o, `o${++n}`, 'fine')).status, 201);
        assert.equal((await c.list(other)).json.messages.length, n);
      };
      // oversize: the text, the body, and a declared length refused before it is read
      const over = await c.send(box, s, 'big', 'x'.repeat(api.limits.maxTextBytes + 1));
      assertError(over, 'oversize');
      assert.equal(over.json.limit, api.limits.maxTextBytes);
      assert.equal(
        (await c.send(box, s, 'exact', 'x'.repeat(api.limits.maxTextBytes))).status,
        201,
      );
      assertError(
        await c.callAlone('POST', `${box.base}/messages`, {
          auth: s.auth,
          rawBody: ' '.repeat(api.limits.maxRequestBytes + 1),
        }),
        'oversize',
      );
      await othersWork();
      // unknown mailbox: well-formed ids nobody created, and malformed ones
      assertError(
        await c.call('GET', `/mailboxes/${'f'.repeat(32)}`, { auth: box.owner }),
        'unknown_mailbox',
      );
      assertError(
        await c.send({ base: `/mailboxes/${'0'.repeat(32)}` }, s, 'x', 'y'),
        'unknown_mailbox',
      );
      assertError(
        await c.call('GET', '/mailboxes/not-an-id/messages', { auth: box.owner }),
        'unknown_mailbox',
      );
      await othersWork();
      // unpaired sender; bad keys of every kind
      assertError(await c.send(box, { auth: '' }, 'x', 'y'), 'unpaired_sender');
      assertError(await c.send(box, o, 'x', 'y'), 'bad_key'); // another mailbox's sender
      assertError(await c.list({ ...box, owner: other.owner }), 'bad_key');
      assertError(await c.list({ ...box, owner: s.auth }), 'bad_key');
      assertError(await c.list({ ...box, owner: 'Bearer nonsense' }), 'bad_key');
      assertError(await c.list({ ...box, owner: '' }), 'bad_key');
      await othersWork();
      // flood: a burst, then refused with Retry-After, while the next sender and mailbox go on
      const t0 = Date.now() + 60_000;
      try {
        await host.hook(box.id, 'clock', { at: t0 });
        for (let i = 0; i < api.limits.floodBurst; i++) {
          assert.equal((await c.send(box, s, `f${i}`, 'burst')).status, 201);
        }
        const flood = await c.send(box, s, 'f-over', 'burst');
        assertError(flood, 'flood');
        assert.equal(flood.json.retryAfterMs, api.limits.floodRefillMs);
        assert.equal(
          flood.headers.get('retry-after'),
          String(Math.ceil(api.limits.floodRefillMs / 1000)),
        );
        assertError(await c.status(box, s, 'f-over'), 'unknown_message');
        assert.equal((await c.send(box, calm, 'c1', 'calm')).status, 201);
        await othersWork();
        await host.hook(box.id, 'clock', { at: t0 + api.limits.floodRefillMs });
        assert.equal((await c.send(box, s, 'f-over', 'burst')).status, 201);
      } finally {
        await host.hook(box.id, 'clock', {});
      }
      // and the rest of the documented surface answers in the same shape
      assertError(await c.call('GET', '/mailboxes'), 'method_not_allowed');
      assertError(await c.call('GET', `${box.base}/nowhere`, { auth: box.owner }), 'not_found');
      assertError(
        await c.call('GET', `${box.base}/stream`, { auth: box.owner }),
        'upgrade_required',
      );
      assertError(
        await c.call('POST', `${box.base}/messages`, { auth: s.auth, rawBody: '{"id":' }),
        'bad_request',
      );
      const info = await host.hook(box.id, 'info');
      assert.equal(info.storageMatchesCore, true);
    },
  );

  test(
    `${label} mailbox: a storage failure answers storage_failed, keeps nothing, and recovers`,
    { timeout: 60_000 },
    async () => {
      const c = client();
      const box = await c.create();
      const other = await c.create();
      const s = await c.paired(box, 'bob');
      const o = await c.paired(other, 'olga');
      assert.equal((await c.send(box, s, 'kept', 'before')).status, 201);
      await host.hook(box.id, 'fail-storage');
      try {
        const failed = await c.send(box, s, 'retried', 'during');
        assertError(failed, 'storage_failed');
        if (!sharedStorage) assert.equal((await c.send(other, o, 'o1', 'unaffected')).status, 201);
      } finally {
        await host.hook(box.id, 'heal-storage');
      }
      const retry = await c.send(box, s, 'retried', 'during');
      assert.equal(retry.status, 201, retry.text);
      assert.deepEqual(
        (await c.list(box)).json.messages.map((m) => m.id),
        ['kept', 'retried'],
      );
      assert.equal((await host.hook(box.id, 'info')).storageMatchesCore, true);
    },
  );
}
