// The HTTP form of the encrypted relay transport (docs/agent-bus.md § HTTP relay transport)
// through both relays users run: the self-hosted Deno host (web/host/rooms.js) and the edge
// Worker under real workerd (Miniflare), where the room's Durable Object holds the HTTP member
// beside a WebSocket member. For each:
//  - a peer over HTTP and a peer over WebSocket, in one encrypted room, trade texts; every byte
//    that crossed the relay's edge both ways (the HTTP requests and responses, the WebSocket
//    messages) is the relay's own view, and it holds no plaintext;
//  - real agents (`tether agent join --transport http` and a WebSocket one) trade messages;
//  - truncated, oversized, malformed and hostile requests get the core's named errors, and the
//    room goes on.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import WebSocket from 'ws';
import { createRelayTransport } from '../../web/peer/relay-transport.js';
import { httpLimits } from '../../web/glue/http-member.js';
import { Harness, waitFor } from '../node/lib/agent-harness.mjs';
import { startDenoRooms, startEdge, ticketFor } from './lib/edge.mjs';

const ROOM_SECRET = 'the HTTP transport test room secret, shared out of band';

async function startHost(kind, t) {
  if (kind === 'workerd') {
    const edge = await startEdge();
    t.after(() => edge.stop());
    return edge;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-http-'));
  const children = new Set();
  const deno = await startDenoRooms({ dir, db: path.join(dir, 'rooms.sqlite'), children });
  t.after(async () => {
    await deno.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return deno;
}

// A WebSocket class that records every message both ways (the relay's view of this member).
function recordingWebSocket(view) {
  return class extends WebSocket {
    constructor(...a) {
      super(...a);
      this.on('message', (d) => view.push(String(d)));
    }
    send(data, ...rest) {
      view.push(String(data));
      return super.send(data, ...rest);
    }
  };
}

// A fetch that records every request body and response body (the relay's view of this member).
function recordingFetch(view) {
  return async (url, init) => {
    if (init?.body) view.push(String(init.body));
    const res = await fetch(url, init);
    const text = await res.text();
    view.push(text);
    return new Response(text, { status: res.status, headers: res.headers });
  };
}

async function peer(host, id, transport, view) {
  const ticket = await ticketFor('lab', id, 'agent');
  const log = { open: [], text: [], errors: [] };
  const t = createRelayTransport({
    url: `${host.wsUrl}/rooms/lab?ticket=${encodeURIComponent(ticket)}`,
    room: 'lab',
    selfId: id,
    secret: ROOM_SECRET,
    reconnectMinMs: 50,
    reconnectMaxMs: 500,
    onError: (e) => log.errors.push(e),
    ...(transport === 'http'
      ? { transport: 'http', fetch: recordingFetch(view) }
      : { WebSocket: recordingWebSocket(view) }),
  });
  t.subscribe({
    open: (p) => log.open.push(p),
    text: (p, s) => log.text.push([p, s]),
  });
  return { t, log };
}

for (const kind of ['deno', 'workerd']) {
  test(`${kind}: an HTTP member and a WebSocket member trade sealed texts; the relay's view holds no plaintext`, async (t) => {
    const host = await startHost(kind, t);
    const view = [];
    const a = await peer(host, 'alice', 'http', view);
    const b = await peer(host, 'bob', 'websocket', view);
    t.after(async () => {
      await a.t.close();
      await b.t.close();
    });
    // Bounded: a member whose hello never reaches the room fails here instead of hanging.
    await waitFor('both joined', () => a.t.isConnected() && b.t.isConnected(), {
      timeoutMs: 30_000,
    });
    assert.equal(a.t.transport, 'http');
    assert.equal(b.t.transport, 'websocket');
    assert.equal(a.t.encrypted, true);
    await waitFor('lanes open', () => a.log.open.includes('bob') && b.log.open.includes('alice'));
    const words = (i) => `PLAINTEXT-CANARY-${i} "é" ${'y'.repeat(i * 7)}`;
    const N = 30;
    for (let i = 0; i < N; i++) {
      assert.equal(a.t.send('bob', `from http ${words(i)}`), true);
      assert.equal(b.t.send('alice', `from ws ${words(i)}`), true);
    }
    await waitFor(`${N} each way`, () => a.log.text.length === N && b.log.text.length === N, {
      timeoutMs: 60_000,
    });
    assert.deepEqual(
      b.log.text,
      Array.from({ length: N }, (_, i) => ['alice', `from http ${words(i)}`]),
    );
    assert.deepEqual(
      a.log.text,
      Array.from({ length: N }, (_, i) => ['bob', `from ws ${words(i)}`]),
    );
    assert.deepEqual(a.log.errors, []);
    assert.deepEqual(b.log.errors, []);
    // The view is real traffic: both members' hellos and sealed lane frames crossed it.
    const all = view.join('\n');
    assert.ok(view.length > 4 * N, `the relay's view recorded ${view.length} texts`);
    assert.match(all, /tether-env/);
    assert.match(all, /"frames":\[/, 'HTTP receive responses are in the view');
    assert.ok(!all.includes('PLAINTEXT-CANARY'), 'no plaintext crossed the relay');
    assert.ok(!all.includes('from http') && !all.includes('from ws'));
    assert.ok(!all.includes(ROOM_SECRET));
    const rooms = await host.hook('rooms', 'lab');
    assert.equal(rooms.httpMembers, 1, 'the host holds one HTTP member');
  });

  test(`${kind}: real agents, one over HTTP and one over WebSocket, exchange messages in an encrypted room`, async (t) => {
    const host = await startHost(kind, t);
    const h = new Harness(t);
    const A = h.dir('alice');
    const B = h.dir('bob');
    const env = { TETHER_ROOM_SECRET: ROOM_SECRET };
    const join = async (dir, id, extra) => {
      const r = await h.run(
        dir,
        ['join', '--relay', `${host.wsUrl}/`, '--room', 'lab', '--id', id, ...extra],
        { env: { ...env, TETHER_TICKET: await ticketFor('lab', id, 'agent') } },
      );
      assert.equal(r.code, 0, r.stderr);
      h.trackSidecar(dir);
    };
    await join(A, 'alice', ['--transport', 'http']);
    await join(B, 'bob', []);
    const st = await h.run(A, ['status'], { env });
    assert.equal(st.json.transport, 'http');
    assert.equal(st.json.encrypted, true);
    await waitFor(
      'each sees the other',
      async () => {
        const pa = (await h.run(A, ['peers'], { env })).json;
        const pb = (await h.run(B, ['peers'], { env })).json;
        return JSON.stringify(pa).includes('bob') && JSON.stringify(pb).includes('alice');
      },
      { timeoutMs: 60_000, everyMs: 300 },
    );
    const sent = await h.run(A, ['send', 'bob', 'hello', 'over', 'http'], { env });
    assert.equal(sent.code, 0, sent.stderr);
    const back = await h.run(B, ['send', 'alice', 'hello', 'over', 'websocket'], { env });
    assert.equal(back.code, 0, back.stderr);
    const texts = (r) => (r.json?.messages ?? []).map((m) => m.envelope?.payload?.text ?? m.text);
    let gotB = [];
    let gotA = [];
    await waitFor(
      'both read',
      async () => {
        gotB = gotB.concat(texts(await h.run(B, ['read'], { env })));
        gotA = gotA.concat(texts(await h.run(A, ['read'], { env })));
        return gotB.length > 0 && gotA.length > 0;
      },
      { timeoutMs: 60_000, everyMs: 300 },
    );
    assert.deepEqual(gotB, ['hello over http']);
    assert.deepEqual(gotA, ['hello over websocket']);
  });

  test(`${kind}: truncated, oversized, malformed and hostile HTTP requests get named errors; the room goes on`, async (t) => {
    const host = await startHost(kind, t);
    const base = `${host.url}/rooms/lab/http`;
    const lim = httpLimits();
    const ticket = encodeURIComponent(await ticketFor('lab', 'mallory', 'agent'));
    const code = async (res) => (await res.text()).split(':')[0];
    // No ticket, a bad ticket, the wrong method.
    let r = await fetch(`${base}/open`, { method: 'POST' });
    assert.equal(r.status, 401);
    r = await fetch(`${base}/open?ticket=x${ticket}`, { method: 'POST' });
    assert.equal(r.status, 401);
    r = await fetch(`${base}/open?ticket=${ticket}`);
    assert.equal(r.status, 405);
    // A ticket for another room opens nothing here.
    const other = encodeURIComponent(await ticketFor('elsewhere', 'mallory', 'agent'));
    r = await fetch(`${base}/open?ticket=${other}`, { method: 'POST' });
    assert.equal(r.status, 401);
    r = await fetch(`${base}/open?ticket=${ticket}`, { method: 'POST' });
    assert.equal(r.status, 200);
    const { session, pollWaitMs, maxBodyBytes } = await r.json();
    assert.match(session, /^[0-9a-f]{32}$/);
    assert.equal(pollWaitMs, lim.pollWaitMs);
    assert.equal(maxBodyBytes, lim.maxBodyBytes);
    const cases = [
      [`send?session=${session}&seq=1`, 'POST', 'x'.repeat(lim.maxBodyBytes + 1), 413, 'too_large'],
      [`send?session=${session}`, 'POST', 'x', 400, 'bad_request'],
      [`send?session=${session.slice(0, 20)}&seq=1`, 'POST', 'x', 400, 'bad_request'],
      [`send?session=${session}&seq=1&seq=2`, 'POST', 'x', 400, 'bad_request'],
      [`send?session=${session}&seq=5`, 'POST', 'x', 409, 'out_of_order'],
      [`send?session=${'0'.repeat(32)}&seq=1`, 'POST', 'x', 404, 'unknown_session'],
      [`recv?session=${session}&cursor=7`, 'GET', null, 400, 'bad_cursor'],
      [`recv?session=${session}&cursor=0`, 'POST', 'x', 405, 'method'],
      [`bogus?session=${session}`, 'POST', 'x', 400, 'bad_request'],
    ];
    for (const [p, method, body, status, name] of cases) {
      r = await fetch(`${base}/${p}&ticket=${ticket}`, { method, body: body ?? undefined });
      assert.equal(r.status, status, `${method} ${p.slice(0, 60)}`);
      assert.equal(await code(r), name, `${method} ${p.slice(0, 60)}`);
    }
    // Hostile frames inside a valid session: the relay refuses them as it would on a WebSocket
    // (not JSON, then a hello for another room), and the session is not lost before that.
    r = await fetch(`${base}/send?session=${session}&seq=1&ticket=${ticket}`, {
      method: 'POST',
      body: '{{{{',
    });
    assert.equal(r.status, 200);
    // An HTTP peer and a WebSocket peer still meet and talk in the same room afterwards.
    const view = [];
    const a = await peer(host, 'alice', 'http', view);
    const b = await peer(host, 'bob', 'websocket', view);
    t.after(async () => {
      await a.t.close();
      await b.t.close();
    });
    // Bounded: a member whose hello never reaches the room fails here instead of hanging.
    await waitFor('both joined', () => a.t.isConnected() && b.t.isConnected(), {
      timeoutMs: 30_000,
    });
    await waitFor('lanes open', () => a.log.open.includes('bob') && b.log.open.includes('alice'));
    assert.equal(a.t.send('bob', 'still here'), true);
    await waitFor('delivered', () => b.log.text.length === 1);
    assert.deepEqual(b.log.text, [['alice', 'still here']]);
  });

  test(`${kind}: every HTTP call carries its ticket: another writer's is refused, and the session ends with the ticket`, async (t) => {
    const host = await startHost(kind, t);
    const base = `${host.url}/rooms/lab/http`;
    const code = async (res) => (await res.text()).split(':')[0];
    const short = encodeURIComponent(await ticketFor('lab', 'mallory', 'agent', { ttlSeconds: 3 }));
    const bobs = encodeURIComponent(await ticketFor('lab', 'bob', 'agent'));
    let r = await fetch(`${base}/open?ticket=${short}`, { method: 'POST' });
    assert.equal(r.status, 200);
    const { session } = await r.json();
    // A call without its ticket, or with another writer's (a leaked session id alone is not
    // enough), is refused; the session goes on.
    r = await fetch(`${base}/send?session=${session}&seq=1`, { method: 'POST', body: 'x' });
    assert.equal(r.status, 401);
    assert.equal(await code(r), 'missing');
    r = await fetch(`${base}/send?session=${session}&seq=1&ticket=${bobs}`, {
      method: 'POST',
      body: 'x',
    });
    assert.equal(r.status, 403);
    assert.equal(await code(r), 'wrong_writer');
    assert.equal((await host.hook('rooms', 'lab')).httpMembers, 1);
    // A receive waits (nothing is queued for mallory)...
    const parked = fetch(`${base}/recv?session=${session}&cursor=0&ticket=${short}`);
    // ...and the relay ends the session itself at the ticket's expiry: the waiting receive
    // says so, and the member's room connection is gone (on the Worker too: the front door
    // hands the room's object the verified expiry with every call).
    r = await parked;
    assert.equal(r.status, 200);
    const v = await r.json();
    assert.deepEqual(v.frames, []);
    assert.equal(v.closed?.code, 4012, JSON.stringify(v));
    assert.equal((await host.hook('rooms', 'lab')).httpMembers, 0);
    // Once the ticket expired, no call of the session is taken.
    await waitFor(
      'the ticket expired',
      async () => {
        // (A cursor past the end is answered at once while the session lives: nothing parks.)
        const res = await fetch(`${base}/recv?session=${session}&cursor=99&ticket=${short}`);
        return res.status === 401 && (await code(res)) === 'expired';
      },
      { timeoutMs: 20_000, everyMs: 250 },
    );
  });
}
