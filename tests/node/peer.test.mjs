// tether/peer without WebRTC (the transfers themselves are in tests/e2e/peer-swarm.test.mjs): the
// Node download folder on a real disk, and a strict type check of the package's declarations.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fileSource, nodeFolder, safeFileName } from '@tether-rt/tether/peer/node';
import { bytesSource, loopbackOnly } from '@tether-rt/tether/peer';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));

test('peer: peer-supplied names become one safe path component', () => {
  assert.equal(safeFileName('../../etc/passwd'), 'passwd');
  assert.equal(safeFileName('a\\b\\c.txt'), 'c.txt');
  assert.equal(safeFileName('..'), 'download.bin');
  assert.equal(safeFileName(''), 'download.bin');
  assert.equal(safeFileName('x\u0000y\n.bin'), 'xy.bin');
  // Names up to 1,024 characters arrive; the disk takes 255 bytes: cut to 240 UTF-8 bytes (room
  // for " (999)"), the extension kept, never inside a code point.
  assert.equal(safeFileName('n'.repeat(400)), 'n'.repeat(240));
  assert.equal(safeFileName('n'.repeat(1020) + '.tar'), 'n'.repeat(236) + '.tar');
  const emoji = safeFileName('\u{1F600}'.repeat(1000) + '.txt');
  assert.equal(emoji, '\u{1F600}'.repeat(59) + '.txt');
  assert.ok(Buffer.byteLength(emoji) <= 240 && emoji.isWellFormed());
  assert.equal(safeFileName('n'.repeat(240)), 'n'.repeat(240));
});

test('peer: the disk folder never overwrites, moves exclusively and keeps serving the final file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tether-peer-node-'));
  try {
    const folder = await nodeFolder(join(dir, 'dl'));
    assert.equal(await folder.readText('x.lock'), null);
    assert.equal(await folder.writeText('x.lock', 'one', { exclusive: true }), true);
    assert.equal(await folder.writeText('x.lock', 'two', { exclusive: true }), false);
    assert.equal(await folder.readText('x.lock'), 'one');
    assert.equal(await folder.writeText('x.lock', 'three'), true);
    assert.equal(await folder.readText('x.lock'), 'three');
    await folder.remove('x.lock');
    assert.equal(await folder.readText('x.lock'), null);

    await writeFile(join(folder.path, 'f.bin'), 'already here');
    const part = await folder.openFile('abc.part');
    await part.write(5, new Uint8Array([5, 6, 7]));
    await part.write(0, new Uint8Array([0, 1, 2, 3, 4]));
    assert.equal(await part.size(), 8);
    assert.deepEqual([...(await part.read(3, 4))], [3, 4, 5, 6]);
    assert.deepEqual([...(await part.read(6, 10))], [6, 7]); // short read at the end
    const saved = await folder.finish(part, 'abc.part', 'f.bin');
    assert.equal(saved.name, 'f (1).bin');
    assert.equal(await readFile(join(folder.path, 'f.bin'), 'utf8'), 'already here');
    assert.deepEqual(
      [...(await readFile(join(folder.path, 'f (1).bin')))],
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    assert.deepEqual([...(await saved.handle.read(0, 2))], [0, 1]);
    assert.deepEqual((await readdir(folder.path)).sort(), ['f (1).bin', 'f.bin']);
    // A hostile name cannot leave the folder.
    const p2 = await folder.openFile('../../evil.part');
    await p2.write(0, new Uint8Array([1]));
    assert.ok((await readdir(folder.path)).includes('evil.part'));
    await p2.close();
    await saved.handle.close();

    const src = await fileSource(join(folder.path, 'f (1).bin'));
    assert.equal(src.size, 8);
    assert.equal(
      await src.sha256(),
      await bytesSource(new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7])).sha256(),
    );
    await src.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// One read-modify-write of a counter file under the folder's mutex, holding it for 150 ms between
// the read and the write; prints what it read.
const COUNTER_UNDER_MUTEX = `
  import { nodeFolder } from '@tether-rt/tether/peer/node';
  const folder = await nodeFolder(process.argv[1]);
  const before = await folder.exclusively('n.lock', async () => {
    const text = await folder.readText('n.lock');
    await new Promise((r) => setTimeout(r, 150));
    await folder.writeText('n.lock', String(Number(text ?? 0) + 1));
    return text;
  });
  console.log(JSON.stringify(before));
`;

test('peer: the disk folder makes a read-decide-write one step across processes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tether-peer-mutex-'));
  try {
    const run = () =>
      new Promise((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ['--input-type=module', '-e', COUNTER_UNDER_MUTEX, dir],
          { cwd: repoDir, stdio: ['ignore', 'pipe', 'inherit'] },
        );
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('error', reject);
        child.on('exit', (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child exited ${code}`)),
        );
      });
    // Two processes race: without the mutex both read nothing and the counter ends at 1.
    const seen = await Promise.all([run(), run()]);
    assert.deepEqual(seen.sort(), ['1', null].sort());
    const folder = await nodeFolder(dir);
    assert.equal(await folder.readText('n.lock'), '2');
    assert.deepEqual(await readdir(dir), ['n.lock'], 'the mutex file is gone afterwards');

    // The mutex of a process that died holding it goes stale and is taken over.
    await writeFile(join(dir, 'n.lock.mutex'), '999999\n');
    const old = new Date(Date.now() - 60_000);
    await utimes(join(dir, 'n.lock.mutex'), old, old);
    assert.equal(await folder.exclusively('n.lock', async () => 'ran'), 'ran');
    assert.deepEqual(await readdir(dir), ['n.lock']);
    // An exception inside releases it too.
    await assert.rejects(
      folder.exclusively('n.lock', async () => {
        throw new Error('inside');
      }),
      /inside/,
    );
    assert.deepEqual(await readdir(dir), ['n.lock']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('peer: loopbackOnly keeps only 127.0.0.1 candidates', () => {
  assert.equal(
    loopbackOnly({ candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host' }),
    true,
  );
  assert.equal(
    loopbackOnly({ candidate: 'candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host' }),
    false,
  );
  assert.equal(
    loopbackOnly({ candidate: 'candidate:1 1 udp 2122260223 x.local 50000 typ host' }),
    false,
  );
  assert.equal(loopbackOnly({}), false);
});

test('peer: tsc type-checks a consumer of tether/peer', () => {
  // A hang guard, not a performance assertion.
  const r = spawnSync(
    process.execPath,
    [`${repoDir}node_modules/.bin/tsc`, '--noEmit', '-p', 'tests/node/tsconfig.peer-types.json'],
    {
      cwd: repoDir,
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});

// The least of a DOM that createProgressView touches, counting the redraws of the file titles.
function fakeContainer() {
  const doc = {
    titleWrites: 0,
    createElement(tag) {
      const node = {
        tag,
        dataset: {},
        children: [],
        className: '',
        value: 0,
        max: 1,
        ownerDocument: doc,
        append: (...c) => node.children.push(...c),
        querySelector: (cls) => node.children.find((c) => c.className === cls) ?? null,
        _text: '',
        get textContent() {
          return node._text;
        },
        set textContent(t) {
          if (node.className === 'tether-transfer-title') doc.titleWrites++;
          node._text = t;
        },
      };
      return node;
    },
  };
  return doc.createElement('div');
}

test('peer: the progress view redraws at most once per interval and shows a state change at once', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { createProgressView } = await import('@tether-rt/tether/peer');
  const container = fakeContainer();
  const doc = container.ownerDocument;
  const view = createProgressView(container, { intervalMs: 250 });
  const report = (have, state = 'downloading') => ({
    fileId: 'f',
    name: 'f.bin',
    role: 'fetch',
    state,
    have,
    total: 100,
    size: 100 * 65536,
    bytes: have * 65536,
    resumed: 0,
    peers: { seed: { received: have * 65536, served: 0 } },
  });
  view.update(report(1)); // a new file: drawn at once
  const bar = () => container.children[0].querySelector('tether-transfer-bar');
  assert.equal(bar().value, 1);
  for (let have = 2; have <= 40; have++) view.update(report(have));
  assert.equal(doc.titleWrites, 1, 'reports inside the interval wait for it');
  assert.equal(bar().value, 1);
  t.mock.timers.tick(250);
  assert.equal(doc.titleWrites, 2, 'one redraw for the interval');
  assert.equal(bar().value, 40, 'with the newest report');
  view.update(report(50));
  view.update(report(100, 'complete')); // a new state: drawn at once, and it is the last word
  assert.equal(bar().value, 100);
  assert.equal(container.children[0].dataset.state, 'complete');
  t.mock.timers.tick(1000);
  assert.equal(bar().value, 100, 'a report waiting from before does not overwrite it');
  view.update(report(60));
  view.flush();
  assert.equal(bar().value, 60, 'flush draws what waits, now');
});
