// tether/peer without WebRTC (the transfers themselves are in tests/e2e/peer-swarm.test.mjs): the
// Node download folder on a real disk, and a strict type check of the package's declarations.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fileSource, nodeFolder, safeFileName } from 'tether/peer/node';
import { bytesSource, loopbackOnly } from 'tether/peer';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));

test('peer: peer-supplied names become one safe path component', () => {
  assert.equal(safeFileName('../../etc/passwd'), 'passwd');
  assert.equal(safeFileName('a\\b\\c.txt'), 'c.txt');
  assert.equal(safeFileName('..'), 'download.bin');
  assert.equal(safeFileName(''), 'download.bin');
  assert.equal(safeFileName('x\u0000y\n.bin'), 'xy.bin');
  assert.equal(safeFileName('n'.repeat(400)).length, 255);
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
