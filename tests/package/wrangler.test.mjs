// The deploy as `wrangler deploy` builds it, offline: the pinned wrangler bundles web/edge/ from
// its wrangler.toml with --dry-run into a folder, and the bundle must hold the Worker, both
// Durable Object classes and the edge WASM module (as a separate module, byte-identical to the
// build of tether-edge, the module with only the bindings the Worker uses; the full module's JS is
// not in the bundle).
// Then the bundle itself runs in workerd (Miniflare) and answers. Prints the upload size.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { repoDir, wranglerCommand, wranglerEnv } from '../../web/edge/wrangler-cli.mjs';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'tether-wrangler-'));
after(() => rmSync(work, { recursive: true, force: true }));
const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

test(
  'wrangler deploy --dry-run bundles the Worker, its Durable Objects and the WASM module',
  { timeout: 180_000 },
  async () => {
    const out = join(work, 'bundle');
    const [cmd, args] = wranglerCommand([
      'deploy',
      '--dry-run',
      '--outdir',
      out,
      '-c',
      'web/edge/wrangler.toml',
    ]);
    let stdout;
    try {
      ({ stdout } = await run(cmd, args, {
        cwd: repoDir,
        env: wranglerEnv({ WRANGLER_LOG_PATH: join(work, 'logs') }),
        maxBuffer: 16 << 20,
      }));
    } catch (e) {
      assert.fail(
        `wrangler deploy --dry-run failed (did make wasm cockpit run?):\n${e.stdout}${e.stderr}`,
      );
    }
    const version = JSON.parse(
      readFileSync(join(repoDir, 'node_modules/wrangler/package.json'), 'utf8'),
    ).version;
    const pinned = JSON.parse(readFileSync(join(repoDir, 'package.json'), 'utf8')).devDependencies
      .wrangler;
    assert.equal(version, pinned, 'node_modules holds the pinned wrangler (run make setup)');

    // Wrangler's own report: the Durable Object bindings and the assets folder.
    assert.match(stdout, /env\.ROOMS \(RoomObject\)\s+Durable Object/);
    assert.match(stdout, /env\.COCKPIT \(CockpitRelayObject\)\s+Durable Object/);
    assert.match(stdout, /env\.MAILBOXES \(MailboxObject\)\s+Durable Object/);
    assert.match(stdout, /Read \d+ files? from the assets directory/);
    const upload = /Total Upload: ([\d.]+ KiB) \/ gzip: ([\d.]+ KiB)/.exec(stdout);
    assert.ok(upload, `no upload size in wrangler's output:\n${stdout}`);

    // The bundle: the Worker exports both classes, and imports the WASM module as its own file.
    const files = readdirSync(out);
    const wasm = files.filter((f) => f.endsWith('.wasm'));
    assert.equal(wasm.length, 1, `one .wasm module in ${files}`);
    assert.equal(
      sha(join(out, wasm[0])),
      sha(join(repoDir, 'build/wasm/tether-edge.wasm')),
      'the bundled module is the edge module as built (wasm/module.cmake), not the full one',
    );
    const worker = readFileSync(join(out, 'worker.js'), 'utf8');
    const exported = /export\s*\{([^}]*)\}\s*;?\s*(\/\/# sourceMappingURL=.*)?\s*$/.exec(worker);
    assert.ok(exported, 'worker.js ends with its export list');
    const names = exported[1].split(',').map((s) =>
      s
        .trim()
        .split(/\s+as\s+/)
        .pop(),
    );
    for (const n of ['RoomObject', 'CockpitRelayObject', 'MailboxObject', 'default'])
      assert.ok(names.includes(n), `worker.js exports ${n}: ${names}`);
    assert.ok(worker.includes(`"./${wasm[0]}"`), 'worker.js imports the .wasm module');
    // Each module's JS locates its own .wasm by name (emscripten's wasmBinaryFile).
    const holds = (module) => worker.includes(`"${module}.wasm"`);
    assert.ok(holds('tether-edge'), "worker.js holds the edge module's JS");
    assert.ok(!holds('tether'), 'worker.js holds no JS of the full module');

    // The bundle as uploaded runs: the cockpit's /api/info, and a room upgrade without a ticket.
    const mf = new Miniflare({
      modules: true,
      modulesRoot: out,
      scriptPath: join(out, 'worker.js'),
      modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
      compatibilityDate: /compatibility_date\s*=\s*"([^"]+)"/.exec(
        readFileSync(join(repoDir, 'web/edge/wrangler.toml'), 'utf8'),
      )[1],
      durableObjects: {
        ROOMS: { className: 'RoomObject', useSQLite: true },
        COCKPIT: { className: 'CockpitRelayObject', useSQLite: true },
        MAILBOXES: { className: 'MailboxObject', useSQLite: true },
      },
      bindings: {
        TICKET_SECRET: 'dry-run-secret-0123456789abcdef0123',
        POLICY_VERSION: '1',
        ROOM_POLICY: '',
        ROOM_LIMITS: '{}',
      },
    });
    try {
      const info = await (await mf.dispatchFetch('http://edge.test/api/info')).json();
      assert.equal(info.version, 7);
      assert.equal(info.wtUrl, undefined, 'the edge serves no WebTransport');
      const room = await mf.dispatchFetch('http://edge.test/rooms/lab', {
        headers: { upgrade: 'websocket' },
      });
      assert.equal(
        room.status,
        401,
        'a room upgrade without a ticket is refused before any socket',
      );
      const made = await mf.dispatchFetch('http://edge.test/mailboxes', { method: 'POST' });
      assert.equal(made.status, 201, 'the bundle creates a hosted mailbox');
      const { mailbox } = await made.json();
      const owned = await mf.dispatchFetch(`http://edge.test/mailboxes/${mailbox}`);
      assert.equal(
        (await owned.json()).error,
        'bad_key',
        'its object answers, and wants the owner key',
      );
    } finally {
      await mf.dispose();
    }
    const bytes = files.reduce((n, f) => n + statSync(join(out, f)).size, 0);
    console.log(
      `# wrangler ${version} deploy bundle: ${files.join(', ')}; ${(bytes / 1024).toFixed(0)} KiB on disk, ` +
        `upload ${upload[1]} (gzip ${upload[2]}), plus the cockpit as static assets`,
    );
  },
);
