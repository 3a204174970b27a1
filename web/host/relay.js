// The self-hosted cockpit relay on Deno: WebTransport (robots on /robot, viewers on /viewer), the
// WebSocket twins /ws/robot and /ws/viewer, GET /api/info and /api/stats, and static files.
// Every protocol decision is made by the C++ core (src/cockpit/relay.hpp) through
// web/glue/cockpit-relay.js, run by the one driver (web/glue/driver.js): every transport event is
// a driver input, the driver carries the core's actions out here and keeps its one timer (the
// reap and publish deadlines). This file only moves bytes (DESIGN.md rule 4). Workaround numbers
// cite cockpit-wire-protocol.md § Workarounds; web/host/README.md records which Deno 2.9 still
// needs.
//
// With --rooms-db FILE (and TICKET_SECRET in the environment) the same port also serves the room
// relay at /rooms/<name> (web/host/rooms-service.js), as the edge Worker does beside its cockpit,
// and keeps the newest teleop lease generation in the same file: a restarted relay starts above
// it (docs/cockpit-protocol.md § The teleop lease) whatever the clock did across the restart.
//
// Run: deno run -A --unstable-net web/host/relay.js [--port 7780] [--auth FILE] [--rtc-file FILE]
//        [--static build/cockpit] [--unsafe-non-loopback --hostname ADDR]
//        [--rooms-db FILE [--rooms-policy FILE]]
//        [--record DIR [--record-file-kib N] [--record-minutes N] [--record-keep-kib N]
//          [--record-chunk-kib N]]
//
// --record DIR records every robot into MCAP files in DIR (web/host/relay-record.js,
// docs/cockpit-recording.md § Recording on the relay); with --auth, TETHER_RECORD_TOKEN is the
// viewer token it records with.
//
// --rtc-file names the SFU (Cloudflare Realtime, or the local SFU of web/sfu/): the relay then
// brokers WebRTC video, making the core's SFU calls with the Realtime client (web/glue/cockpit-sfu.js).
import { loadCockpitRelay } from '../glue/cockpit-relay.js';
import { createSfuCaller } from '../glue/cockpit-sfu.js';
import { createWsLane } from '../glue/cockpit-ws-lane.js';
import { createDriver } from '../glue/driver.js';
import { loadWire } from '../glue/wire.js';
import { loadTetherModule } from '../glue/load.js';
import { createRealtimeClient } from '../sfu/client.js';
import { parseRtcFile } from '../sfu/rtc-file.js';
import { listenWebTransport, makeCertificate } from './cert.js';

// Workaround 5: a rejected promise nobody awaited (Deno issue 28406, a closed browser tab) must
// not take the relay down.
globalThis.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  if (flags.verbose) console.error('tether relay: unhandled rejection', e.reason);
});

const flags = parseFlags(Deno.args);
const loopback = flags.hostname === '127.0.0.1' || flags.hostname === '::1';
if (!loopback && !flags.unsafeNonLoopback) {
  console.error(
    `tether relay: refusing to listen on ${flags.hostname}: the relay binds loopback unless ` +
      '--unsafe-non-loopback is given (and then use an --auth file).',
  );
  Deno.exit(2);
}

const authText = flags.auth ? await Deno.readTextFile(flags.auth) : '';
const rooms = flags.roomsDb ? await openRooms() : null;
const rtc = flags.rtcFile ? await readRtcFile(flags.rtcFile) : null;
// The core's clock is monotonic from here; the wall clock at that moment seeds the teleop lease
// generations, so a restarted relay issues only greater ones than the robots' floors (lease.hpp).
// With --rooms-db the stored floor holds even when the clock stepped back (tests step it back
// with TETHER_TEST_HOOKS=1 and TETHER_TEST_CLOCK_SKEW_MS).
const clockSkewMs =
  Deno.env.get('TETHER_TEST_HOOKS') === '1'
    ? Number(Deno.env.get('TETHER_TEST_CLOCK_SKEW_MS') ?? 0)
    : 0;
const wallClockMs = Date.now() + clockSkewMs;
const started = performance.now();
const now = () => Math.floor(performance.now() - started);
const core = await loadCockpitRelay({
  authText,
  sfu: !!rtc,
  turn: !!rtc?.turnKeyId,
  wallClockMs,
  leaseGenFloor: rooms ? rooms.cockpitState.leaseGen() : 0,
});
const wire = await loadWire();

// --- sessions -------------------------------------------------------------------------------
/** id -> { kind: 'wt'|'ws', role, wt?, ws?, control?, carrier?, out: Map<stream, OutStream>, in: Map<stream, reader> } */
const sessions = new Map();

// Write completions are reported per turn, not per write: every write that completes while one
// microtask checkpoint runs goes into one driver input, as one counted handleWritesDone per
// stream (a stream's writes complete in order). With 8 viewers that is one input per frame's
// writes instead of eight, each with its drain (bench/README.md § cockpit fan-out). A failure is
// reported after the completions before it.
/** @type {Map<number, number>} stream -> writes completed since the last flush */
const writesDone = new Map();
function writeDone(stream) {
  if (writesDone.size === 0) queueMicrotask(flushWritesDone);
  writesDone.set(stream, (writesDone.get(stream) ?? 0) + 1);
}
function flushWritesDone() {
  if (writesDone.size === 0) return;
  const done = [...writesDone];
  writesDone.clear();
  input((t) => {
    for (const [stream, count] of done) core.handleWritesDone(stream, count, t);
  });
}
// A transport failure: the completions already seen go in first, in their order.
function failed(fn) {
  flushWritesDone();
  input(fn);
}

// Chains writes on one writer so they happen in order; resolves when this one completes.
function chain(holder, fn) {
  holder.tail = (holder.tail ?? Promise.resolve()).then(fn);
  return holder.tail;
}

const driver = createDriver(
  core,
  {
    perform(a) {
      if (a.kind === 'persist_lease_gen') return persistLeaseGen(a.gen);
      if (sfu?.perform(a)) return;
      const s = sessions.get(a.session);
      if (s) (s.kind === 'wt' ? performWt : performWs)(s, a);
    },
  },
  {
    now,
    onError: (e, where) => flags.verbose && console.error(`tether relay: ${where} failed`, e),
  },
);
const input = (fn) => driver.input(fn);
const sfu = rtc ? createSfuCaller(core, driver, createRealtimeClient(rtc)) : null;

// Runs before the grant that names `gen` is sent (the core orders it first). Without --rooms-db
// the wall-clock seed alone carries generations across restarts. A generation that cannot be
// stored must not reach a robot, so a storage failure stops the relay (robots and viewers
// reconnect to the next one, which starts above whatever was stored).
function persistLeaseGen(gen) {
  if (!rooms) return;
  try {
    rooms.cockpitState.putLeaseGen(gen);
  } catch (e) {
    console.error(
      `tether relay: cannot store the teleop lease generation in ${flags.roomsDb} (${e.message}); ` +
        'stopping so no robot is granted a generation a restart could reissue: fix the disk and start the relay again',
    );
    Deno.exit(1);
  }
}

async function readRtcFile(path) {
  let text;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    console.error(`tether relay: cannot read the rtc file ${path}: ${e.message}`);
    Deno.exit(2);
  }
  const parsed = parseRtcFile(text, { source: `the rtc file ${path}` });
  if (parsed.ok === true) return parsed.rtc;
  console.error(`tether relay: ${parsed.error}`);
  Deno.exit(2);
}

function performWt(s, a) {
  switch (a.kind) {
    case 'send_datagram':
      s.lastDatagram = s.datagrams.write(a.bytes).catch(() => {});
      return;
    case 'write_control':
      if (s.controlWriter) chain(s.controlQ, () => s.controlWriter.write(a.bytes)).catch(() => {});
      return;
    case 'open_carrier': {
      // Workaround 3: the one relay-opened unidirectional stream per robot session. Writes queue
      // behind its creation; the core counts what is unfinished and fails an overflowing carrier.
      /** @type {{id: number, failed: boolean, ready?: Promise<unknown>, writer?: WritableStreamDefaultWriter}} */
      const c = (s.carrier = { id: a.stream, failed: false });
      c.ready = s.wt.createUnidirectionalStream().then((st) => (c.writer = st.getWriter()));
      c.ready.catch(() => failCarrier(s, c));
      return;
    }
    case 'write_carrier': {
      const c = s.carrier;
      if (!c || c.failed) return;
      chain(c, async () => {
        await c.ready;
        await c.writer.write(a.bytes);
      }).then(
        () => writeDone(c.id),
        () => failCarrier(s, c),
      );
      return;
    }
    case 'open_stream': {
      // Workaround 7: waitUntilAvailable, and a sendOrder that decreases with every stream.
      const o = { reset: null, writer: null };
      s.out.set(a.stream, o);
      s.wt
        .createUnidirectionalStream({ sendOrder: a.sendOrder, waitUntilAvailable: true })
        .then((st) => {
          o.writer = st.getWriter();
          if (o.reset !== null) return resetOut(s, a.stream, o);
          input((t) => core.handleStreamOpened(a.stream, t));
        })
        .catch(() => {
          s.out.delete(a.stream);
          failed((t) => core.handleStreamFailed(a.stream, t));
        });
      return;
    }
    case 'write_stream': {
      const o = s.out.get(a.stream);
      if (!o?.writer) return;
      o.writer.write(a.bytes).then(
        () => writeDone(a.stream),
        () => {
          if (o.reset !== null) return; // our own reset
          s.out.delete(a.stream);
          failed((t) => core.handleStreamFailed(a.stream, t));
        },
      );
      return;
    }
    case 'reset_stream': {
      const r = s.in.get(a.stream);
      if (r) {
        // A one-shot stream whose frame is in (or whose framing failed): STOP_SENDING, which
        // also returns the peer's stream credit without waiting for its lazy FIN.
        s.in.delete(a.stream);
        r.cancel().catch(() => {});
        return;
      }
      const o = s.out.get(a.stream);
      if (!o) return;
      o.reset = a.end;
      // Workaround 12: latest streams always end in RESET, which also drops undelivered bytes.
      if (o.writer) resetOut(s, a.stream, o);
      return;
    }
    case 'close_session':
      closeWt(s, a);
      return;
  }
}

function resetOut(s, id, o) {
  s.out.delete(id);
  o.writer.abort(0).catch(() => {});
}

function failCarrier(s, c) {
  if (s.closed || c.failed) return;
  c.failed = true;
  failed((t) => core.handleStreamFailed(c.id, t));
}

async function closeWt(s, a) {
  if (s.closed) return;
  s.closed = true;
  // Let the error message that precedes the close reach the peer.
  const flushed = Promise.all(
    [s.controlQ.tail, s.lastDatagram].map((p) => (p ?? Promise.resolve()).catch(() => {})),
  );
  // A datagram write resolves when it is queued, not sent: give it a moment on the wire too.
  await Promise.race([
    flushed.then(() => new Promise((r) => setTimeout(r, 50))),
    new Promise((r) => setTimeout(r, 300)),
  ]);
  try {
    s.wt.close({ closeCode: a.code ? 4000 : 0, reason: (a.reason ?? '').slice(0, 100) });
  } catch {}
  sessions.delete(s.id);
}

// --- WebSocket lane (v7 notes § Endpoints): shared with the edge Worker -----------------------
const wsLane = createWsLane(core, driver);
const performWs = (s, a) => wsLane.perform(s.lane, a);

function acceptWebSocket(req, role) {
  const { socket, response } = Deno.upgradeWebSocket(req);
  socket.binaryType = 'arraybuffer';
  let handlers = null;
  socket.onopen = () => {
    handlers = wsLane.accept(socket, role);
    if (handlers)
      sessions.set(handlers.session.id, {
        id: handlers.session.id,
        kind: 'ws',
        role,
        lane: handlers.session,
      });
  };
  socket.onmessage = (e) => handlers?.message(e.data);
  socket.onclose = socket.onerror = () => {
    if (!handlers) return;
    sessions.delete(handlers.session.id);
    handlers.closed();
  };
  return response;
}

// --- WebTransport ---------------------------------------------------------------------------
async function readInto(reader, onChunk, onEnd) {
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value?.length) onChunk(value);
    }
  } catch {
    // A RESET: the core drops a partial frame (workaround 12).
  } finally {
    onEnd?.();
  }
}

function acceptIncoming(s, readable) {
  const id = input((t) => core.handleIncomingOpen(s.id, t));
  if (!id) {
    readable.cancel().catch(() => {});
    return;
  }
  const reader = readable.getReader();
  s.in.set(id, reader);
  readInto(
    reader,
    (chunk) => {
      if (s.in.has(id)) input((t) => core.handleIncomingData(id, chunk, t));
    },
    () => {
      if (s.in.delete(id)) input((t) => core.handleIncomingEnd(id, t));
    },
  );
}

async function serveWebTransport(wt) {
  await wt.ready;
  const path = new URL(wt.url).pathname;
  const role = path === '/robot' ? 'robot' : path === '/viewer' ? 'viewer' : null;
  if (!role) {
    wt.close({ closeCode: 404, reason: 'open /robot or /viewer' });
    return;
  }
  const id = input((t) => core.handleSessionOpen(role, 'webtransport', t));
  if (!id) {
    wt.close({ closeCode: 503, reason: 'relay full' });
    return;
  }
  const s = {
    id,
    kind: 'wt',
    role,
    wt,
    out: new Map(),
    in: new Map(),
    controlQ: {},
    closed: false,
    datagrams: wt.datagrams.writable.getWriter(),
  };
  sessions.set(id, s);
  wt.closed
    .catch(() => {})
    .finally(() => {
      if (!s.closed) {
        s.closed = true;
        sessions.delete(id);
      }
      failed((t) => core.handleSessionClosed(id, t));
    });
  // Datagrams: robot pings and replies, viewer teleop.
  (async () => {
    const r = wt.datagrams.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await r.read();
        if (done) break;
        input((t) => core.handleDatagram(id, value, t));
      }
    } catch {}
  })();
  // Peer-opened bidirectional streams. Workaround 10 accepted from the raw QUIC connection; on
  // Deno 2.9 the WebTransport accept loop survives raced resets (README), so it is used directly.
  (async () => {
    const r = wt.incomingBidirectionalStreams.getReader();
    let first = true;
    try {
      for (;;) {
        const { value, done } = await r.read();
        if (done) break;
        if (role === 'viewer' && first) {
          // The viewer's control stream: length-prefixed JSON both ways.
          first = false;
          s.controlWriter = value.writable.getWriter();
          readInto(value.readable.getReader(), (chunk) =>
            input((t) => core.handleControlData(id, chunk, t)),
          );
          continue;
        }
        // Workaround 3: never write on a robot-opened stream; RESET its send half.
        value.writable.abort(0).catch(() => {});
        acceptIncoming(s, value.readable);
      }
    } catch {}
  })();
  // Peer-opened unidirectional streams work on Deno 2.9 (workaround 1 is no longer needed on this
  // leg), so publishes and robot data may use them too.
  (async () => {
    const r = wt.incomingUnidirectionalStreams.getReader();
    try {
      for (;;) {
        const { value, done } = await r.read();
        if (done) break;
        acceptIncoming(s, value);
      }
    } catch {}
  })();
}

// --- HTTP ---------------------------------------------------------------------------------
const STATIC_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};
const repoRoot = new URL('../../', import.meta.url);
// Module paths a page may load straight from the repo (the glue and the WASM build); everything
// else comes from the static folder, by default the bundled cockpit (build/cockpit/).
const REPO_ROOTS = ['web/glue/', 'build/wasm/'];

async function serveStatic(pathname) {
  let rel = decodeURIComponent(pathname).replace(/^\/+/, '');
  if (rel.split('/').includes('..')) return null;
  if (!REPO_ROOTS.some((r) => rel.startsWith(r)))
    rel = `${flags.static}/${rel === '' ? 'index.html' : rel}`;
  try {
    const body = await Deno.readFile(new URL(rel, repoRoot));
    const ext = rel.slice(rel.lastIndexOf('.'));
    return new Response(body, {
      headers: { 'content-type': STATIC_TYPES[ext] ?? 'application/octet-stream' },
    });
  } catch {
    return null;
  }
}

const cert = await makeCertificate();
const { server, endpoint, port } = await listen(flags.hostname, flags.port);
const host = flags.hostname.includes(':') ? `[${flags.hostname}]` : flags.hostname;
const info = {
  version: wire.limits.protocolVersion,
  wtUrl: `https://${host}:${port}`,
  certHash: cert.hex,
  wsUrl: `ws://${host}:${port}`,
};

async function handle(req) {
  const url = new URL(req.url);
  if (url.pathname.startsWith('/rooms/'))
    return rooms
      ? rooms.handle(req)
      : new Response(
          'this relay serves no rooms: start it with --rooms-db FILE and TICKET_SECRET set\n',
          { status: 404 },
        );
  if (req.headers.get('upgrade')?.toLowerCase() === 'websocket') {
    if (url.pathname === '/ws/robot') return acceptWebSocket(req, 'robot');
    if (url.pathname === '/ws/viewer') return acceptWebSocket(req, 'viewer');
    return new Response('WebSocket endpoints are /ws/robot and /ws/viewer\n', { status: 404 });
  }
  if (url.pathname === '/api/info')
    return Response.json(info, { headers: { 'access-control-allow-origin': '*' } });
  if (url.pathname === '/api/stats')
    return Response.json(core.stats(), { headers: { 'access-control-allow-origin': '*' } });
  return (
    (await serveStatic(url.pathname)) ??
    new Response(
      url.pathname === '/'
        ? `no cockpit in ${flags.static}/: build it (node web/cockpit/build.mjs) or pass --static DIR\n`
        : 'not found: the relay serves /api/info, /api/stats, /ws/robot, /ws/viewer and the cockpit\n',
      { status: 404 },
    )
  );
}

// HTTP on TCP and WebTransport on UDP share one port number (v7 notes § Endpoints). With --port 0
// a free pair is found.
async function listen(hostname, wanted) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const server = Deno.serve({ hostname, port: wanted, onListen: () => {} }, handle);
    const port = server.addr.port;
    try {
      // One-shot streams (one per robot frame): the credit for a second of lazy FINs.
      const { endpoint, listener } = listenWebTransport({
        hostname,
        port,
        cert,
        streamCredit: true,
      });
      (async () => {
        for await (const incoming of listener) {
          incoming
            .accept()
            .then((conn) => Deno.upgradeWebTransport(conn))
            .then(serveWebTransport)
            .catch((e) => {
              if (flags.verbose) console.error('tether relay: WebTransport session failed', e);
            });
        }
      })();
      return { server, endpoint, port };
    } catch (e) {
      await server.shutdown();
      if (wanted !== 0)
        throw new Error(
          `tether relay: UDP port ${port} is taken (${e.message}); pick another --port`,
        );
    }
  }
  throw new Error('tether relay: found no free TCP+UDP port pair');
}

console.log(
  `tether relay ready: http://${host}:${port} (WebTransport ${info.wtUrl}, cert sha-256 ${cert.hex}, ` +
    `WebSocket ${info.wsUrl}/ws/{robot,viewer}, auth ${flags.auth ? 'on' : 'off'}, ` +
    `WebRTC ${rtc ? `via ${rtc.baseUrl}${rtc.turnKeyId ? ' with TURN' : ''}` : 'off'}` +
    `${rooms ? `, rooms ${info.wsUrl}/rooms/<name>` : ''})`,
);

const recorder = flags.record ? await startRecording() : null;

for (const sig of ['SIGINT', 'SIGTERM']) {
  Deno.addSignalListener(sig, async () => {
    // Recordings end first, while the relay still runs: their files get indexes and a summary.
    await recorder?.close().catch((e) => console.error(`tether relay: --record: ${e.message}`));
    sfu?.close();
    driver.close();
    endpoint.close();
    server.shutdown().finally(() => Deno.exit(0));
  });
}

async function startRecording() {
  const { startRelayRecorder } = await import('./relay-record.js');
  const token = Deno.env.get('TETHER_RECORD_TOKEN') || null;
  if (flags.auth && !token) {
    console.error(
      'tether relay: --record with --auth needs a viewer token: set TETHER_RECORD_TOKEN to one the auth file grants',
    );
    Deno.exit(2);
  }
  const kib = (n) => (n == null ? undefined : n * 1024);
  return startRelayRecorder({
    mod: await loadTetherModule({}, 'cockpit_clients'),
    wire,
    info,
    dir: flags.record,
    token,
    fileBytes: kib(flags.recordFileKib),
    fileMs: flags.recordMinutes == null ? undefined : flags.recordMinutes * 60_000,
    keepBytes: kib(flags.recordKeepKib),
    chunkBytes: kib(flags.recordChunkKib),
  });
}

async function openRooms() {
  const { createRoomsService, ticketSecretProblem } = await import('./rooms-service.js');
  const secret = Deno.env.get('TICKET_SECRET') ?? '';
  if (ticketSecretProblem(secret)) {
    console.error(`tether relay: --rooms-db: ${ticketSecretProblem(secret)}`);
    Deno.exit(2);
  }
  const { DatabaseSync } = await import('node:sqlite');
  return createRoomsService({
    database: new DatabaseSync(flags.roomsDb),
    secret,
    policyText: flags.roomsPolicy ? await Deno.readTextFile(flags.roomsPolicy) : '',
  });
}

function parseFlags(args) {
  const f = {
    port: 7780,
    hostname: '127.0.0.1',
    auth: '',
    rtcFile: '',
    static: 'build/cockpit',
    unsafeNonLoopback: false,
    verbose: false,
    roomsDb: '',
    roomsPolicy: '',
    record: '',
    // --record's bounds; unset, relay-record.js's defaults apply.
    recordFileKib: null,
    recordMinutes: null,
    recordKeepKib: null,
    recordChunkKib: null,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const next = () => {
      if (i + 1 >= args.length) throw new Error(`tether relay: ${a} needs a value`);
      return args[++i];
    };
    if (a === '--port') f.port = Number(next());
    else if (a === '--hostname') f.hostname = next();
    else if (a === '--auth') f.auth = next();
    else if (a === '--rtc-file') f.rtcFile = next();
    else if (a === '--static') f.static = next().replace(/\/+$/, '');
    else if (a === '--unsafe-non-loopback') f.unsafeNonLoopback = true;
    else if (a === '--verbose') f.verbose = true;
    else if (a === '--rooms-db') f.roomsDb = next();
    else if (a === '--rooms-policy') f.roomsPolicy = next();
    else if (a === '--record') f.record = next().replace(/\/+$/, '');
    else if (a === '--record-file-kib') f.recordFileKib = Number(next());
    else if (a === '--record-minutes') f.recordMinutes = Number(next());
    else if (a === '--record-keep-kib') f.recordKeepKib = Number(next());
    else if (a === '--record-chunk-kib') f.recordChunkKib = Number(next());
    else {
      console.error(
        `tether relay: unknown flag ${a}; flags: --port N --hostname ADDR --auth FILE --rtc-file FILE --static DIR --unsafe-non-loopback --verbose --rooms-db FILE --rooms-policy FILE --record DIR --record-file-kib N --record-minutes N --record-keep-kib N --record-chunk-kib N`,
      );
      Deno.exit(2);
    }
  }
  if (!Number.isInteger(f.port) || f.port < 0 || f.port > 65535) {
    console.error('tether relay: --port must be 0..65535');
    Deno.exit(2);
  }
  for (const [flag, v] of [
    ['--record-file-kib', f.recordFileKib],
    ['--record-minutes', f.recordMinutes],
    ['--record-keep-kib', f.recordKeepKib],
    ['--record-chunk-kib', f.recordChunkKib],
  ])
    if (v !== null && (!(v > 0) || !Number.isFinite(v))) {
      console.error(`tether relay: ${flag} must be a positive number`);
      Deno.exit(2);
    }
  return f;
}
