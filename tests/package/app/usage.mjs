// Uses every browser-safe subpath of the installed package for real. This file is copied into a
// fresh project that installed the packed tarball (tests/package/pack.test.mjs), so every
// `@tether-rt/tether/...` import below resolves to that project's node_modules, never to the
// repository. Node and Deno (main.mjs) and Chromium (page.mjs, bundled by esbuild) run it; each
// step throws with what went wrong, and the result says what each step saw.
import { loadWire } from '@tether-rt/tether/wire';
import { loadDecode } from '@tether-rt/tether/decode';
import { createRelay, createRoomClient, initRelay } from '@tether-rt/tether/relay';
import { loadCockpitRelay } from '@tether-rt/tether/relay-cockpit';
import { mintTicket, verifyTicket } from '@tether-rt/tether/tickets';
import { loadBus } from '@tether-rt/tether/bus';
import { loadMailbox } from '@tether-rt/tether/mailbox';
import { loadSwarm } from '@tether-rt/tether/swarm';
import { bytesSource, createSwarmPeer, sha256HexAsync } from '@tether-rt/tether/peer';

function check(cond, what) {
  if (!cond) throw new Error(`package usage: ${what}`);
}

/**
 * @param {object} o
 * @param {object} o.load  options for every loader: {} (Node, Deno: read from disk) or {wasmModule}
 * @param {() => Promise<object>} o.folder  a SwarmFolder for the download
 * @param {(folder: object, name: string) => Promise<Uint8Array>} o.readSaved  the saved file's bytes
 * @param {Uint8Array} o.costmapZlib  zlib of the 4 cells [0, 50, 100, 255]
 */
export async function exercise({ load, folder, readSaved, costmapZlib }) {
  const out = {};

  // tether/wire: a data frame and a control message, encoded and decoded.
  const wire = await loadWire(load);
  const payload = new TextEncoder().encode('payload');
  const enc = wire.encodeDataFrame({ ch: 'odom', seq: 7, ts: 1.5, delivery: 'reliable' }, payload);
  check(enc.ok, `encodeDataFrame failed: ${JSON.stringify(enc)}`);
  const dec = wire.decodeDataFrame(enc.bytes);
  check(dec.ok && dec.header.ch === 'odom' && dec.header.seq === 7, 'decodeDataFrame header');
  check(new TextDecoder().decode(dec.payload) === 'payload', 'decodeDataFrame payload');
  const stream = new wire.DataFrameStream();
  const pushed = stream.push(enc.bytes.subarray(0, 5));
  const rest = stream.push(enc.bytes.subarray(5));
  stream.close();
  check(pushed.frames.length === 0 && rest.frames.length === 1, 'DataFrameStream across a split');
  const hello = wire.parseMessage(
    { t: 'hello', v: wire.limits.protocolVersion, role: 'viewer' },
    'viewer',
  );
  check(hello.ok, 'parseMessage hello');
  out.wire = { frameBytes: enc.bytes.length, prefix: [...enc.bytes.subarray(0, 8)] };

  // tether/decode: a 2x2 costmap.
  const decode = await loadDecode(load);
  const cm = new decode.ChannelDecoder('costmap.zlib.v1');
  const r = cm.decode({ w: 2, h: 2, res: 0.1, origin: [0, 0, 0] }, costmapZlib);
  check(r.ok, `costmap decode: ${JSON.stringify(r)}`);
  out.decode = { cells: [...cm.value.cells] };
  cm.close();

  // tether/relay: a room relay with two clients; a write from one reaches the other.
  await initRelay(load);
  const relay = createRelay({ policyVersion: 0 });
  const clients = {};
  const link = (name) => {
    const client = createRoomClient({ room: 'lab', origin: `${name}-tab`, writer: name });
    const inbox = [];
    const conn = relay.connectText({ send: (t) => inbox.push(t), close() {} }, { writer: name });
    const pump = () => {
      while (inbox.length)
        for (const m of client.receive(inbox.shift()))
          check(conn.receive(m) === null, 'relay receive');
    };
    check(conn.receive(client.hello()) === null, 'hello');
    clients[name] = { client, conn, pump };
    return clients[name];
  };
  const alice = link('alice');
  const bob = link('bob');
  alice.pump();
  bob.pump();
  const msg = alice.client.write([{ kind: 'set', path: ['note'], next: 'hi from alice' }]);
  check(msg, 'write before welcome');
  check(alice.conn.receive(msg) === null, 'env');
  for (let i = 0; i < 3; i++) {
    alice.pump();
    bob.pump();
  }
  check(
    JSON.stringify(bob.client.value()) === '{"note":"hi from alice"}',
    `bob sees ${JSON.stringify(bob.client.value())}`,
  );
  check(alice.client.unacked === 0, 'alice got her echo');
  out.relay = { seq: relay.room('lab').seq, value: bob.client.value() };

  // tether/relay-cockpit: a viewer's hello over the WebSocket lane is welcomed.
  const cockpit = await loadCockpitRelay(load);
  const viewer = cockpit.handleSessionOpen('viewer', 'websocket', 0);
  const helloFrame = wire.encodeDataFrame(
    { ch: '@control', seq: 0, ts: 0, delivery: 'reliable' },
    new TextEncoder().encode(hello.json),
  );
  cockpit.handleWsMessage(viewer, helloFrame.bytes, 0);
  const replies = [];
  for (let a = cockpit.pollAction(); a; a = cockpit.pollAction()) {
    if (a.bytes)
      replies.push(JSON.parse(new TextDecoder().decode(wire.decodeDataFrame(a.bytes).payload)).t);
  }
  check(replies[0] === 'welcome' && replies[1] === 'robots', `cockpit replies ${replies}`);
  cockpit.dispose();
  out.cockpit = { replies };

  // tether/tickets: minted, verified, and refused for another room.
  const secret = 'package-test-secret-0123456789abcdef';
  const ticket = await mintTicket(secret, { writer: 'u1', kind: 'agent', room: 'lab' });
  const ok = await verifyTicket(secret, ticket, { room: 'lab' });
  const other = await verifyTicket(secret, ticket, { room: 'elsewhere' });
  check(ok.ok && ok.writer === 'u1' && !other.ok && other.reason === 'room', 'tickets');
  out.tickets = { kind: ok.kind, other: other.reason };

  // tether/bus: an envelope parsed strictly, and a forged one refused.
  const bus = await loadBus(load);
  const envelope = {
    v: 1,
    id: 'm1',
    type: 'chat',
    from: { streamId: 'alice', role: 'agent', name: 'Alice', instanceId: 'i1' },
    to: 'bob',
    topic: null,
    ts: 1700000000000,
    payload: { text: 'hello' },
  };
  const parsed = bus.parseEnvelope(JSON.stringify(envelope));
  check(
    parsed.ok && parsed.envelope.payload.text === 'hello',
    `parseEnvelope ${JSON.stringify(parsed)}`,
  );
  const bad = bus.parseEnvelope(JSON.stringify({ ...envelope, type: 'nonsense' }));
  check(!bad.ok && bad.code === 'unknown_type', `bad envelope ${JSON.stringify(bad)}`);
  out.bus = { refused: bad.code };

  // tether/mailbox: a mailbox created by the core, at the id the host computes from the entropy.
  const mailbox = await loadMailbox(load);
  const core = mailbox.createCore();
  core.loaded(0);
  const entropy = mailbox.entropy();
  core.handleRequest(1, { method: 'POST', target: '/mailboxes', entropy }, 1);
  let created = null;
  for (let a = core.pollAction(); a; a = core.pollAction()) {
    if (a.kind === 'persist') core.handlePersisted(a.token, true, 1);
    if (a.kind === 'respond') created = JSON.parse(a.body);
  }
  core.dispose();
  check(created?.mailbox === mailbox.mailboxIdFor(entropy), `mailbox ${JSON.stringify(created)}`);
  out.mailbox = {
    idLength: created.mailbox.length,
    refused: mailbox.frontDoor('GET', '/mailboxes/nope', -1, false).error,
  };

  // tether/swarm + tether/peer: a small file swarmed between two in-process peers.
  const swarm = await loadSwarm(load);
  const [ta, tb] = transportPair('seeder', 'fetcher');
  const seeder = createSwarmPeer({ swarm, transport: ta, seed: 1 });
  const fetcher = createSwarmPeer({ swarm, transport: tb, seed: 2 });
  const file = new Uint8Array(40_000).map((_, i) => (i * 31 + 7) & 0xff);
  const { fileId } = await seeder.share({
    name: 'data.bin',
    source: bytesSource(file),
    chunkSize: 4096,
  });
  check(fileId === (await sha256HexAsync(file)), 'file id is the SHA-256');
  const dir = await folder();
  const got = await fetcher.fetch(fileId, dir, { waitForOfferMs: 5000 });
  const saved = await readSaved(dir, got.name);
  check(
    saved.length === file.length && saved.every((b, i) => b === file[i]),
    'swarmed bytes differ',
  );
  await fetcher.close();
  await seeder.close();
  out.swarm = { name: got.name, size: got.size, chunks: Math.ceil(file.length / 4096) };
  return out;
}

// Two endpoints of web/peer/transport.d.ts's PeerTransport, always open to each other, with both
// lanes; messages arrive in order, on a later task, as over a real channel.
function transportPair(a, b) {
  const ends = {};
  const make = (self, other) => {
    const handlers = new Set();
    const queue = [];
    let scheduled = false;
    const end = {
      selfId: self,
      binaryCapable: true,
      openPeers: () => [other],
      send: (peer, text) => peer === other && deliver(['text', self, text]),
      sendBinary: (peer, bytes) => peer === other && deliver(['binary', self, bytes.slice()]),
      bufferedAmount: () => 0,
      hasBinary: () => true,
      subscribe(h) {
        handlers.add(h);
        return () => handlers.delete(h);
      },
      async close() {},
      receive(event) {
        queue.push(event);
        if (scheduled) return;
        scheduled = true;
        setTimeout(() => {
          scheduled = false;
          for (const [kind, ...args] of queue.splice(0))
            for (const h of [...handlers]) h[kind]?.(...args);
        }, 0);
      },
    };
    const deliver = (event) => {
      ends[other].receive(event);
      return true;
    };
    return end;
  };
  ends[a] = make(a, b);
  ends[b] = make(b, a);
  return [ends[a], ends[b]];
}

/** A SwarmFolder in memory (web/peer/index.d.ts), for runtimes where no disk folder is used. */
export function memoryFolder() {
  const texts = new Map();
  const files = new Map(); // name -> { bytes }
  const handle = (box) => ({
    async read(offset, length) {
      return box.bytes.slice(offset, Math.min(box.bytes.length, offset + length));
    },
    async write(offset, bytes) {
      if (offset + bytes.length > box.bytes.length) {
        const grown = new Uint8Array(offset + bytes.length);
        grown.set(box.bytes);
        box.bytes = grown;
      }
      box.bytes.set(bytes, offset);
    },
    size: async () => box.bytes.length,
    flush: async () => {},
    sha256: () => sha256HexAsync(box.bytes),
    close: async () => {},
  });
  return {
    key: 'memory',
    readText: async (name) => texts.get(name) ?? null,
    async writeText(name, text, { exclusive = false } = {}) {
      if (exclusive && texts.has(name)) return false;
      texts.set(name, text);
      return true;
    },
    async remove(name) {
      texts.delete(name);
      files.delete(name);
    },
    modifiedMs: async (name) => (texts.has(name) || files.has(name) ? Date.now() : null),
    exclusively: (name, fn) => fn(),
    async openFile(name) {
      if (!files.has(name)) files.set(name, { bytes: new Uint8Array(0) });
      return handle(files.get(name));
    },
    async finish(h, partName, finalName) {
      let name = finalName;
      for (let n = 1; files.has(name); n++) name = `${finalName} (${n})`;
      const box = files.get(partName);
      files.delete(partName);
      files.set(name, box);
      return { name, handle: handle(box) };
    },
    bytes: (name) => files.get(name)?.bytes ?? null,
  };
}
