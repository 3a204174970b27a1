// The package as a user gets it: `npm pack` (whose prepack builds the WASM module), then the
// tarball installed offline into a fresh project outside the repository, and every public subpath
// used from there in Node, Deno, Chromium (a page bundled by esbuild), workerd (a Worker importing
// `@tether-rt/tether/relay`, under Miniflare) and tsc --strict against the shipped .d.ts.
//
// The install is `npm ci --offline` against a lockfile made from the repository's, so it needs
// nothing but npm's cache, which `npm ci` (make setup) filled. The tools (esbuild, Playwright,
// Miniflare, tsc, Deno, ws) come from the repository; the package under test never does.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Miniflare } from 'miniflare';
import { chromium } from 'playwright-core';
import { WebSocket } from 'ws';
import { LAUNCH } from '../e2e/lib/chromium.mjs';
import { startStaticServer } from '../e2e/lib/static_server.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'tether-pack-'));
const app = join(work, 'app');
const installed = join(app, 'node_modules', ...pkg.name.split('/'));
let packed = null; // npm pack's report: {filename, files: [{path}]}

after(() => rmSync(work, { recursive: true, force: true }));

// Every wait is bounded, so a hang fails its test with a reason and the cleanup still runs.
function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// The repository's lockfile entries for the package's dependency tree, so the fresh project
// installs exactly those versions from npm's cache.
function appLock(tarball) {
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));
  const spec = `file:${relative(app, tarball)}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  const packages = {
    '': { name: 'app', dependencies: { [pkg.name]: spec } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: spec,
      integrity,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  const todo = Object.keys(pkg.dependencies ?? {}).map((name) => ['', name]);
  while (todo.length > 0) {
    const [from, name] = todo.pop();
    let at = from;
    let loc = null;
    for (;;) {
      const candidate = `${at ? `${at}/` : ''}node_modules/${name}`;
      if (lock.packages[candidate]) {
        loc = candidate;
        break;
      }
      if (!at) break;
      at = at.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '');
    }
    assert.ok(loc, `package-lock.json has no entry for ${name} (needed by ${from || pkg.name})`);
    if (packages[loc]) continue;
    const { dev, devOptional, peer, ...entry } = lock.packages[loc];
    packages[loc] = entry;
    for (const dep of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies }))
      todo.push([loc, dep]);
  }
  return { name: 'app', lockfileVersion: 3, requires: true, packages };
}

before(async () => {
  // prepack runs `make wasm`; its log goes to stderr, so stdout is npm's JSON.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: repo,
    maxBuffer: 64 << 20,
  });
  [packed] = JSON.parse(stdout);
  const tarball = join(work, packed.filename);
  cpSync(join(repo, 'tests/package/app'), app, { recursive: true });
  const lock = appLock(tarball);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'app',
      private: true,
      type: 'module',
      dependencies: lock.packages[''].dependencies,
    }),
  );
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify(lock, null, 2));
  try {
    await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: app,
    });
  } catch (e) {
    throw new Error(
      `installing the tarball offline failed (${e.stderr?.trim()}). npm's cache must hold the ` +
        'dependencies: run `npm ci` in the repository (make setup) first.',
    );
  }
});

// Every file an export (under every condition), the bin or a runtime asset names; a pattern
// export (`./modules/*`) names the files of its folder that the package ships.
function shippedTargets() {
  const out = new Set(Object.values(pkg.bin));
  for (const target of Object.values(pkg.exports))
    for (const file of typeof target === 'string' ? [target] : Object.values(target)) out.add(file);
  out.add('web/peer/opfs-worker.js'); // new Worker(new URL('./opfs-worker.js', import.meta.url))
  const files = packed.files.map((f) => f.path);
  return [...out]
    .map((f) => f.replace(/^\.\//, ''))
    .flatMap((f) => {
      if (!f.includes('*')) return [f];
      const [head, tail] = f.split('*');
      const matched = files.filter((p) => p.startsWith(head) && p.endsWith(tail));
      assert.ok(matched.length > 0, `the pattern export ${f} matches no shipped file`);
      return matched;
    });
}

// Which WASM module's JS a bundle holds (wasm/module.cmake names them build/wasm/<module>.mjs).
const modulesIn = (metafile) =>
  Object.keys(metafile.inputs)
    .map((f) => /build\/wasm\/([\w-]+)\.mjs$/.exec(f)?.[1])
    .filter(Boolean)
    .sort();

test('pack: the tarball holds every file the exports and the bin name, and no build tree', () => {
  const files = new Set(packed.files.map((f) => f.path));
  for (const f of shippedTargets()) assert.ok(files.has(f), `the tarball lacks ${f}`);
  assert.ok(files.has('LICENSE'), 'the tarball lacks LICENSE');
  for (const f of files)
    assert.ok(!/^(src|tests|bench|build\/(native|fuzz|deps))\//.test(f), `ships ${f}`);
  for (const module of [
    'tether',
    'tether-cockpit',
    'tether-rooms',
    'tether-cockpit-relay',
    'tether-mailbox',
  ])
    for (const ext of ['.mjs', '.wasm'])
      assert.ok(
        existsSync(join(installed, `build/wasm/${module}${ext}`)),
        `installed without build/wasm/${module}${ext}`,
      );
  console.log(
    `# ${packed.filename}: ${packed.files.length} files, ${(packed.size / 1024).toFixed(0)} KiB packed`,
  );
});

test('pack: every module the entry points reach is in the installed package', async () => {
  // esbuild follows every static and literal dynamic import; an import of a file the tarball
  // lacks fails the build. The sidecar is spawned by path (web/agent/commands/join.js), the OPFS
  // worker by URL, so both are entry points too.
  const entryPoints = [
    ...shippedTargets().filter((f) => /\.m?js$/.test(f)),
    'web/agent/sidecar.js',
  ];
  const result = await build({
    absWorkingDir: installed,
    entryPoints,
    bundle: true,
    write: false,
    outdir: join(work, 'reach'),
    format: 'esm',
    platform: 'node',
    packages: 'external',
    loader: { '.wasm': 'file' },
    metafile: true,
    logLevel: 'silent',
  }).catch((e) =>
    assert.fail(
      `an import does not resolve inside the package (add the file or its folder to package.json's files): ${e.message}`,
    ),
  );
  const reached = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('..'));
  assert.ok(
    reached.includes('web/agent/cli.js') && reached.includes('build/wasm/tether.mjs'),
    `${reached}`,
  );
});

function checkUsage(r) {
  assert.deepEqual(
    r.wire.prefix,
    [52, 0, 0, 0, 7, 0, 0, 0],
    'data-frame prefix: headerLen 52, payloadLen 7',
  );
  assert.deepEqual(r.decode.cells, [0, 50, 100, 255]);
  assert.deepEqual(r.relay, { seq: 1, value: { note: 'hi from alice' } });
  assert.deepEqual(r.cockpit.replies, ['welcome', 'robots']);
  assert.deepEqual(r.tickets, { kind: 'agent', other: 'room' });
  assert.equal(r.bus.refused, 'unknown_type');
  assert.deepEqual(r.mailbox, { idLength: 32, refused: 'unknown_mailbox' });
  assert.deepEqual(r.swarm, { name: 'data.bin', size: 40_000, chunks: 10 });
}

test('node: every subpath imported from the installed package and used', async () => {
  const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: app });
  const r = JSON.parse(stdout);
  assert.ok(r.resolved.startsWith(`file://${installed}/`), `resolved ${r.resolved}`);
  assert.ok(
    r.resolved.endsWith('/web/glue/full/wire.js'),
    `node gets the full module: ${r.resolved}`,
  );
  assert.deepEqual(r.modules, ['tether'], 'node loaded the full module and no other');
  checkUsage(r);
});

test('node: the bin runs from the installed package', async () => {
  const { stdout } = await run(
    join(app, 'node_modules/.bin/tether'),
    ['agent', 'notify', '--dir', join(work, 'agent'), '--json'],
    {
      cwd: app,
    },
  );
  assert.deepEqual(JSON.parse(stdout).ok, true);
});

// README § Agents from the npm package alone: the relay is `tether rooms serve`, and the agents
// that join it run their sidecars from the installed package.
test('node: `tether rooms serve` from the installed package relays two agents', async (t) => {
  const bin = join(app, 'node_modules/.bin/tether');
  const env = { ...process.env, TICKET_SECRET: createHash('sha256').update(work).digest('hex') };
  const relay = spawn(bin, ['rooms', 'serve', '--port', '0', '--json'], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => relay.kill('SIGKILL'));
  const ready = await new Promise((resolve, reject) => {
    let out = '';
    relay.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    relay.once('exit', (code) => reject(new Error(`rooms serve exited ${code}`)));
  });
  const dirs = { alice: join(work, 'serve-alice'), bob: join(work, 'serve-bob') };
  const tether = (args, extra = {}) => run(bin, args, { cwd: app, env: { ...env, ...extra } });
  for (const id of ['alice', 'bob']) {
    const { stdout: ticket } = await tether(['rooms', 'ticket', '--room', 'lab', '--id', id]);
    await tether(
      ['agent', 'join', '--dir', dirs[id], '--relay', ready.url, '--room', 'lab', '--id', id],
      { TETHER_TICKET: ticket.trim() },
    );
    t.after(() => tether(['agent', 'leave', '--dir', dirs[id]]).catch(() => {}));
  }
  await tether(['agent', 'send', '--dir', dirs.alice, 'bob', 'hello from the package']);
  let read = '';
  for (let i = 0; i < 100 && !read.includes('hello from the package'); i++) {
    read = (await tether(['agent', 'read', '--dir', dirs.bob])).stdout;
    if (!read.includes('hello from the package')) await new Promise((r) => setTimeout(r, 100));
  }
  assert.match(read, /alice chat \S+: hello from the package/);
});

test('node: `tether mcp` from the installed package serves its tools over stdio', async () => {
  // The server runs the SDK the package depends on (installed beside it); the client is the
  // repository's copy of the SDK, as any MCP client is someone else's code.
  assert.ok(existsSync(join(app, 'node_modules/@modelcontextprotocol/sdk/package.json')));
  const transport = new StdioClientTransport({
    command: join(app, 'node_modules/.bin/tether'),
    args: ['mcp', '--dir', join(work, 'mcp')],
    cwd: app,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'pack-test', version: '0.0.0' });
  try {
    await bounded(client.connect(transport), 60_000, 'tether mcp initialize');
    const { tools } = await client.listTools();
    for (const name of ['send', 'read', 'peers', 'handoff', 'swarm_fetch'])
      assert.ok(
        tools.some((x) => x.name === name),
        `the installed tether mcp lists ${name}`,
      );
    const r = await client.callTool({ name: 'read', arguments: {} });
    assert.ok(!r.isError, r.content?.[0]?.text);
    assert.deepEqual(r.structuredContent.messages, []);
    assert.match(stderr, new RegExp(`serving ${join(work, 'mcp')} over stdio`));
  } finally {
    await client.close();
  }
});

test('deno: the installed package imports and runs', async () => {
  const { stdout } = await run(
    join(repo, 'node_modules/.bin/deno'),
    [
      'run',
      '--no-lock',
      '--no-prompt',
      `--allow-read`,
      `--allow-write=${tmpdir()}`,
      '--allow-env',
      'main.mjs',
    ],
    { cwd: app, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' } },
  );
  const r = JSON.parse(stdout);
  assert.match(r.runtime, /^deno /);
  assert.ok(r.resolved.startsWith(`file://${installed}/`), `resolved ${r.resolved}`);
  assert.ok(
    r.resolved.endsWith('/web/glue/full/wire.js'),
    `deno gets the full module: ${r.resolved}`,
  );
  assert.deepEqual(r.modules, ['tether'], 'deno loaded the full module and no other');
  checkUsage(r);
});

// A page of the app bundled by esbuild for the browser into DIR, opened in Chromium from a static
// server: the bundle's metafile, the page's window.result and what the server served.
async function bundledPage(entry, dir) {
  const dist = join(app, dir);
  const bundled = await build({
    absWorkingDir: app,
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outdir: dist,
    loader: { '.wasm': 'file' },
    logLevel: 'warning',
    metafile: true,
  });
  const script = entry.replace(/\.mjs$/, '.js');
  writeFileSync(
    join(dist, 'index.html'),
    `<!doctype html><script type="module" src="/${script}"></script>`,
  );
  const server = await startStaticServer(dist);
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.origin}/index.html`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60_000 });
    const result = await page.evaluate(() => window.result);
    assert.ok(result.ok, result.error);
    assert.deepEqual(errors, []);
    return { metafile: bundled.metafile, result, served: server.served };
  } finally {
    await browser.close();
    await server.close();
  }
}

test(
  'chromium: a page bundled by esbuild from the installed package',
  { timeout: 120_000 },
  async () => {
    const { metafile, result, served } = await bundledPage('page.mjs', 'dist');
    assert.deepEqual(modulesIn(metafile), ['tether'], 'a browser bundle holds the full module');
    checkUsage(result);
    assert.ok(served.some((s) => s.path.endsWith('.wasm') && s.type === 'application/wasm'));
  },
);

test(
  'chromium: a page bundled with only tether/cockpit-viewer loads its module and runs a viewer',
  { timeout: 120_000 },
  async () => {
    // The subpath's default is a full/ wrapper that registers the module it runs on, so the
    // bundle holds that module's JS rather than falling back to a path beside the glue.
    const { metafile, result } = await bundledPage('viewer-page.mjs', 'viewer-dist');
    assert.deepEqual(
      modulesIn(metafile),
      ['tether'],
      'a bundle of tether/cockpit-viewer alone holds the module it runs on',
    );
    assert.deepEqual(result.viewer, {
      protocolVersion: 7,
      publish: 'not_connected',
      stopped: false,
    });
  },
);

test(
  'workerd: a Worker importing tether/relay from the installed package serves a room',
  { timeout: 120_000 },
  async () => {
    const dist = join(app, 'worker-dist');
    const bundled = await build({
      absWorkingDir: app,
      entryPoints: ['worker.mjs'],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      outdir: dist,
      loader: { '.wasm': 'copy' },
      logLevel: 'warning',
      metafile: true,
    });
    // The workerd condition: the rooms Worker's module (its JS and its .wasm) for tether/relay,
    // and nothing of the full module or of the other edge Workers' modules.
    assert.deepEqual(
      modulesIn(bundled.metafile),
      ['tether-rooms'],
      'a rooms Worker bundle holds the rooms module only',
    );
    const wasmInputs = Object.keys(bundled.metafile.inputs).filter((f) => f.endsWith('.wasm'));
    assert.ok(
      wasmInputs.length > 0 && wasmInputs.every((f) => f.endsWith('build/wasm/tether-rooms.wasm')),
      `the Worker imports only tether-rooms.wasm: ${wasmInputs}`,
    );
    const mf = new Miniflare({
      // One Durable Object (Room) holds the relay: only the object owning a WebSocket may write it.
      modules: true,
      modulesRoot: dist,
      scriptPath: join(dist, 'worker.js'),
      modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
      compatibilityDate: '2025-01-01',
      durableObjects: { ROOMS: 'Room' },
      host: '127.0.0.1',
      port: 0,
    });
    const sockets = [];
    try {
      const url = (await mf.ready).toString().replace(/^http/, 'ws');
      const join_ = async (writer) => {
        const ws = new WebSocket(`${url}rooms/lab?writer=${writer}`);
        sockets.push(ws);
        const inbox = [];
        let wake = null;
        ws.on('message', (d) => {
          inbox.push(JSON.parse(String(d)));
          wake?.();
        });
        await bounded(
          new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject)),
          30_000,
          `${writer}'s WebSocket to the Worker`,
        );
        const next = (t) =>
          bounded(
            (async () => {
              for (;;) {
                const i = inbox.findIndex((m) => m.t === t);
                if (i >= 0) return inbox.splice(i, 1)[0];
                await new Promise((r) => (wake = r));
              }
            })(),
            30_000,
            `${writer} waiting for ${t} (got ${JSON.stringify(inbox)})`,
          );
        ws.send(
          JSON.stringify({
            t: 'hello',
            room: 'lab',
            origin: `${writer}-tab`,
            proto: 3,
            policyVersion: 0,
          }),
        );
        return { ws, welcome: await next('welcome'), next };
      };
      const alice = await join_('alice');
      const bob = await join_('bob');
      assert.ok(
        bob.welcome.members.includes('alice-tab'),
        `bob's welcome: ${JSON.stringify(bob.welcome)}`,
      );
      const env = {
        proto: 3,
        instance: alice.welcome.instance,
        origin: 'alice-tab',
        writer: 'alice',
        version: 1,
        hlc: { p: 1, l: 0 },
        policyVersion: 0,
        ops: [{ kind: 'set', path: ['note'], next: 'from workerd', cites: [], epoch: 0 }],
      };
      alice.ws.send(JSON.stringify({ t: 'env', room: 'lab', env }));
      const seen = await bob.next('env');
      assert.equal(seen.env.seq, 1);
      assert.equal(seen.env.ops[0].next, 'from workerd');
      assert.equal((await alice.next('env')).env.seq, 1, 'the writer gets its echo');
      const info = await (await mf.dispatchFetch('http://x/info?room=lab')).json();
      assert.deepEqual(info, { seq: 1, members: 2 });
    } finally {
      for (const ws of sockets) ws.close();
      await mf.dispose();
    }
  },
);

test('tsc: every subpath type-checks with --strict against the shipped .d.ts', async () => {
  const tsc = join(repo, 'node_modules/typescript/bin/tsc');
  try {
    await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app });
  } catch (e) {
    assert.fail(`tsc --strict failed against the installed package:\n${e.stdout}${e.stderr}`);
  }
});
