// The deploy as `node web/edge/deploy.mjs` builds it, offline: the pinned wrangler bundles each
// edge Worker (web/edge/workers.mjs: mailbox, cockpit relay, rooms) from its wrangler config with
// --dry-run, and each bundle must hold its Worker, its Durable Object class and its own WASM module
// (a separate module, byte-identical to the build of that Worker's module, and no other module's
// JS). Then the three bundles run together in workerd (Miniflare) as deployed, and the rooms
// Worker, the front door, answers every system's route. Prints each Worker's upload size and its
// cold start under workerd, and checks the rooms Worker's upload against its budget.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Miniflare } from 'miniflare';
import { repoDir } from '../../web/edge/wrangler-cli.mjs';
import {
  EDGE_WORKERS,
  FRONT,
  ROOMS_UPLOAD_BUDGET_GZ_KIB,
  dryRun,
  miniflareWorkers,
  uploadLine,
} from '../../web/edge/workers.mjs';

const work = mkdtempSync(join(tmpdir(), 'tether-wrangler-'));
after(() => rmSync(work, { recursive: true, force: true }));
const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const BINDINGS = {
  TICKET_SECRET: 'dry-run-secret-0123456789abcdef0123',
  POLICY_VERSION: '1',
  ROOM_POLICY: '',
  ROOM_LIMITS: '{}',
};
/** @type {Map<string, Awaited<ReturnType<typeof dryRun>>>} */
const bundles = new Map();
const bundleOf = (w) => {
  const b = bundles.get(w.name);
  assert.ok(b, `${w.name} was not bundled (the dry-run test failed)`);
  return b;
};
const scriptOf = (w) => ({
  modulesRoot: bundleOf(w).outdir,
  scriptPath: bundleOf(w).script,
});

test(
  'wrangler deploy --dry-run bundles each edge Worker with its Durable Object and its own WASM module',
  { timeout: 300_000 },
  async () => {
    const version = JSON.parse(
      readFileSync(join(repoDir, 'node_modules/wrangler/package.json'), 'utf8'),
    ).version;
    const pinned = JSON.parse(readFileSync(join(repoDir, 'package.json'), 'utf8')).devDependencies
      .wrangler;
    assert.equal(version, pinned, 'node_modules holds the pinned wrangler (run make setup)');
    for (const w of EDGE_WORKERS) {
      const d = await dryRun(w, join(work, w.name), { logs: join(work, 'logs') });
      bundles.set(w.name, d);
      // Wrangler's own report: the Durable Object and service bindings web/edge/workers.mjs lists.
      for (const [binding, className] of Object.entries(w.durableObjects))
        assert.match(d.stdout, new RegExp(`env\\.${binding} \\(${className}\\)\\s+Durable Object`));
      for (const [binding, service] of Object.entries(w.services))
        assert.match(d.stdout, new RegExp(`env\\.${binding} \\(${service}\\)\\s+Worker`));
      // ...and no other: every Durable Object and Worker binding wrangler lists is in the list.
      const bound = [...d.stdout.matchAll(/^env\.(\w+) \([^)]*\)\s+(Durable Object|Worker)\s*$/gm)];
      assert.deepEqual(
        bound.map((m) => m[1]).sort(),
        [...Object.keys(w.durableObjects), ...Object.keys(w.services)].sort(),
        `${w.config} binds what web/edge/workers.mjs lists for ${w.name}`,
      );
      if (w.front) assert.match(d.stdout, /Read \d+ files? from the assets directory/);

      // The bundle: the Worker exports its class, and imports its own WASM module as a file.
      const wasm = d.files.filter((f) => f.file.endsWith('.wasm'));
      assert.equal(
        wasm.length,
        1,
        `one .wasm module in ${w.name}'s bundle: ${d.files.map((f) => f.file)}`,
      );
      assert.equal(
        sha(join(d.outdir, wasm[0].file)),
        sha(join(repoDir, `build/wasm/${w.module}.wasm`)),
        `${w.name}'s bundled module is ${w.module} as built (wasm/module.cmake)`,
      );
      const js = readFileSync(d.script, 'utf8');
      const exported = /export\s*\{([^}]*)\}\s*;?\s*(\/\/# sourceMappingURL=.*)?\s*$/.exec(js);
      assert.ok(exported, `${w.name}'s worker.js ends with its export list`);
      const names = exported[1].split(',').map((s) =>
        s
          .trim()
          .split(/\s+as\s+/)
          .pop(),
      );
      for (const n of [...Object.values(w.durableObjects), 'default'])
        assert.ok(names.includes(n), `${w.name}'s worker.js exports ${n}: ${names}`);
      assert.ok(js.includes(`"./${wasm[0].file}"`), `${w.name}'s worker.js imports its .wasm`);
      // Each module's JS locates its own .wasm by name (emscripten's wasmBinaryFile).
      for (const other of ['tether', 'tether-edge', ...EDGE_WORKERS.map((o) => o.module)])
        assert.equal(
          js.includes(`"${other}.wasm"`),
          other === w.module,
          `${w.name}'s worker.js ${other === w.module ? 'holds' : 'holds no'} JS of ${other}`,
        );
    }
    console.log(
      `# wrangler ${version} deploy --dry-run, per Worker (the cockpit's files are static assets):`,
    );
    for (const w of EDGE_WORKERS) console.log(`#   ${uploadLine(bundleOf(w))}`);
  },
);

test(`the rooms Worker uploads at most ${ROOMS_UPLOAD_BUDGET_GZ_KIB} KiB gzip`, async () => {
  const d = bundleOf(FRONT);
  const { tetherModule } = await import(join(repoDir, `build/wasm/${FRONT.module}.mjs`));
  assert.ok(
    d.uploadGzKiB <= ROOMS_UPLOAD_BUDGET_GZ_KIB,
    `the rooms Worker's upload is ${d.uploadGzKiB} KiB gzip, over its ${ROOMS_UPLOAD_BUDGET_GZ_KIB} KiB ` +
      `budget. What it holds: ${uploadLine(d)}; its module ${FRONT.module} binds ` +
      `${tetherModule.bindings.join(', ')} (wasm/module.cmake). A binding added to ${FRONT.module}, ` +
      'a core it reaches, or JS the Worker imports grew it: bench/README.md § Module size says how ' +
      'to see where the bytes go (--profiling-funcs).',
  );
});

test(
  'the bundles run together as deployed: the front door answers every system',
  { timeout: 120_000 },
  async () => {
    const mf = new Miniflare({
      cf: false,
      workers: miniflareWorkers({
        scriptFor: scriptOf,
        bindings: BINDINGS,
      }),
    });
    try {
      // The cockpit relay Worker, through the front door.
      const info = await (await mf.dispatchFetch('http://edge.test/api/info')).json();
      assert.equal(info.version, 7);
      assert.equal(info.wtUrl, undefined, 'the edge serves no WebTransport');
      assert.equal(info.wsUrl, 'ws://edge.test', "the cockpit's URLs name the public hostname");
      const robot = await mf.dispatchFetch('http://edge.test/ws/robot');
      assert.equal(
        robot.status,
        426,
        "a plain GET of a cockpit socket is the cockpit Worker's answer",
      );
      // The rooms Worker itself.
      const room = await mf.dispatchFetch('http://edge.test/rooms/lab', {
        headers: { upgrade: 'websocket' },
      });
      assert.equal(
        room.status,
        401,
        'a room upgrade without a ticket is refused before any socket',
      );
      // The mailbox Worker, through the front door.
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
    // Without the other Workers, the front door says what to deploy.
    const alone = new Miniflare({
      cf: false,
      workers: miniflareWorkers({ scriptFor: scriptOf, bindings: BINDINGS, workers: [FRONT] }),
    });
    try {
      const res = await alone.dispatchFetch('http://edge.test/api/info');
      assert.equal(res.status, 503);
      assert.match(
        await res.text(),
        /COCKPIT_SERVICE service binding to it is missing: deploy every edge Worker/,
      );
    } finally {
      await alone.dispose();
    }
  },
);

// Cold start: each bundle alone in a fresh workerd, from start to its first answer from its WASM
// module (its probe), beside the same for a Worker with no WASM (workerd's own start). Printed,
// not asserted (timings have no place in a test); bench/modules.bench.mjs repeats it in rounds.
test('cold start of each Worker under workerd (printed)', { timeout: 180_000 }, async () => {
  writeFileSync(join(work, 'floor.js'), 'export default { fetch: () => new Response("") };');
  const time = async (options, path, init) => {
    const t0 = performance.now();
    const mf = new Miniflare({ cf: false, ...options });
    try {
      const res = await mf.dispatchFetch(`http://edge.test${path}`, init);
      await res.arrayBuffer();
      return { ms: performance.now() - t0, status: res.status };
    } finally {
      await mf.dispose();
    }
  };
  const floor = await time(
    {
      modules: true,
      modulesRoot: work,
      scriptPath: join(work, 'floor.js'),
      compatibilityDate: '2025-01-01',
    },
    '/',
  );
  const lines = [];
  for (const w of EDGE_WORKERS) {
    const [options] = miniflareWorkers({ scriptFor: scriptOf, bindings: BINDINGS, workers: [w] });
    const r = await time(options, w.probe.path, w.probe.init);
    assert.equal(r.status, w.probe.status, `${w.name}'s probe ${w.probe.path}`);
    lines.push(
      `#   ${w.name.padEnd(15)} ${r.ms.toFixed(0).padStart(6)} ms to its first answer (${w.probe.path})`,
    );
  }
  console.log(
    `# cold start under workerd (one run; a Worker with no WASM: ${floor.ms.toFixed(0)} ms):`,
  );
  for (const l of lines) console.log(l);
});
