// The README's agent walk-through (§ Agents), line by line, in a fresh clone:
// the files `git clone` would give (every tracked and unignored file of this checkout), the set-up
// command included. It runs in a private network namespace with only `lo`, so nothing in it may
// reach the network, and port 8787 is ours. What a clone would download, and nothing else, is
// taken from this checkout: node_modules/ (npm ci's output, same lockfile) and build/deps/
// (the zlib and Mbed TLS sources). `make setup` still builds the WASM module in the clone.
// Afterwards no ticket may appear in any output, log or state file but its 0600 ticket file.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { inPrivateNetns } from './lib/agent-harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SECTION = '### Agents';

/** The first ```sh block of the README's § Agents, as lines. */
function readmeAgentBlock(readme) {
  const at = readme.indexOf(SECTION);
  assert.ok(at >= 0, `README has a "${SECTION}" section`);
  const m = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(at));
  assert.ok(m, '§ Agents has a sh block');
  return m[1].split('\n').filter((l) => l.trim() !== '');
}

/** A copy of what a clone holds: tracked and unignored files, symlinks kept. */
function freshClone(dest) {
  const list = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: ROOT,
  });
  execFileSync('tar', ['--null', '-T', '-', '-cf', path.join(dest, '..', 'src.tar')], {
    cwd: ROOT,
    input: list,
  });
  execFileSync('tar', ['-xf', path.join(dest, '..', 'src.tar'), '-C', dest]);
  // node_modules as hard links, never a symlink: if the clone's `make setup` decides to run
  // `npm ci` (a lockfile that changed since this checkout's install), npm empties the folder it
  // installs into, and through a symlink that would be this checkout's own node_modules.
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(dest, 'node_modules')]);
  fs.mkdirSync(path.join(dest, 'build'));
  fs.symlinkSync(path.join(ROOT, 'build', 'deps'), path.join(dest, 'build', 'deps'));
}

/** PIDs of processes running in `dir` (the relay and sidecars the walk-through started). */
function processesIn(dir) {
  const pids = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      const cwd = fs.readlinkSync(`/proc/${p}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(p));
    } catch {}
  }
  return pids;
}

function ccacheEnv() {
  // Only to make the clone's WASM build cheap on a machine that already built it: ccache keys on
  // paths relative to CCACHE_BASEDIR, and the clone has the same layout under this checkout.
  try {
    const dir = execFileSync('ccache', ['-k', 'cache_dir'], { encoding: 'utf8' }).trim();
    return {
      CCACHE_DIR: dir,
      CCACHE_BASEDIR: process.env.CCACHE_BASEDIR ?? ROOT,
      CMAKE_C_COMPILER_LAUNCHER: 'ccache',
      CMAKE_CXX_COMPILER_LAUNCHER: 'ccache',
    };
  } catch {
    return {};
  }
}

if (await inPrivateNetns(import.meta.url, { timeoutMs: 1_200_000 })) {
  test('README § Agents, line by line, in a fresh clone', { timeout: 1_100_000 }, async (t) => {
    const lines = readmeAgentBlock(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    fs.mkdirSync(path.join(ROOT, 'build'), { recursive: true });
    const base = fs.mkdtempSync(path.join(ROOT, 'build', 'readme-clone-'));
    const clone = path.join(base, 'clone');
    const home = path.join(base, 'home');
    fs.mkdirSync(clone);
    fs.mkdirSync(home);
    t.after(() => {
      for (const pid of processesIn(clone)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      fs.rmSync(base, { recursive: true, force: true });
    });
    freshClone(clone);
    assert.ok(!fs.existsSync(path.join(clone, 'build', 'wasm')), 'the clone has no WASM build');

    // Each line runs as written, in one shell (its exports carry on), after a marker naming it.
    const script = ['set -e', 'trap \'echo "README line failed: $BASH_COMMAND" >&2\' ERR'];
    lines.forEach((l, i) => script.push(`echo '>>> README line ${i + 1}'`, l));
    fs.writeFileSync(path.join(base, 'readme.sh'), `${script.join('\n')}\n`);
    const env = { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', ...ccacheEnv() };
    Object.assign(env, {
      DENO_NO_UPDATE_CHECK: '1', // no network here: nothing may try it
      npm_config_update_notifier: 'false',
      NODE_PATH: process.env.NODE_PATH ?? '/usr/share/nodejs',
    });
    const child = spawn('bash', [path.join(base, 'readme.sh')], {
      cwd: clone,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise((r) => child.once('exit', (c, s) => r(c ?? s)));
    // Anything still running in the clone (a line failed before `leave` or `kill`) is ours.
    // The relay got its SIGTERM from `kill %1` just now: give it a moment to exit first.
    for (let i = 0; i < 100 && processesIn(clone).length; i++)
      await new Promise((r) => setTimeout(r, 100));
    const left = processesIn(clone).map((pid) => {
      let cmd = '?';
      try {
        cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {}
      process.kill(pid, 'SIGKILL');
      return `${pid} ${cmd}`;
    });
    assert.equal(code, 0, `the walk-through failed:\n${out}`);
    assert.deepEqual(left, [], `left running after the walk-through:\n${out}`);

    const step = (n) => out.split(`>>> README line ${n}\n`)[1]?.split('>>> README line')[0] ?? '';
    const at = (re) => lines.findIndex((l) => re.test(l)) + 1;
    assert.ok(
      fs.existsSync(path.join(clone, 'build', 'wasm', 'tether.wasm')),
      'set-up built the WASM module',
    );
    assert.match(
      step(at(/agent join .*--id alice/)),
      /^joined room 'lab' as 'alice' \(sidecar pid \d+; 0 other peer\(s\) online\)$/m,
    );
    assert.match(
      step(at(/agent join .*--id bob/)),
      /^joined room 'lab' as 'bob' \(sidecar pid \d+; 1 other peer\(s\) online\)$/m,
    );
    assert.match(step(at(/agent send/)), /^sent [\w-]+ to bob$/m);
    assert.match(step(at(/agent read/)), /^\[\d{4}-[^\]]+\] alice chat [\w-]+: hello bob$/m);
    assert.match(step(at(/agent leave .*alice/)), /^left; sidecar pid \d+ stopped$/m);

    // No ticket anywhere but the ticket files.
    const tickets = ['alice', 'bob'].map((n) => path.join(home, '.tether', n, 'ticket'));
    const secrets = tickets.map((f) => fs.readFileSync(f, 'utf8').trim());
    for (const f of tickets) assert.equal(fs.statSync(f).mode & 0o777, 0o600);
    const files = [];
    const walk = (d) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile() && !tickets.includes(p)) files.push(p);
      }
    };
    walk(home);
    assert.ok(files.some((f) => f.endsWith('sidecar.log')));
    for (const s of secrets) {
      assert.match(s, /^t1\.[\w-]+\.[\w-]+$/);
      assert.ok(!out.includes(s) && !out.includes(s.slice(-24)), 'no ticket in any output');
      for (const f of files)
        assert.ok(!fs.readFileSync(f, 'latin1').includes(s.slice(-24)), `no ticket in ${f}`);
    }
  });
}
