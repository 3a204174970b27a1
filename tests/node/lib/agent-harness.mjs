// Real processes for the agent CLI tests: a loopback room relay (tests/e2e/lib/room_server.mjs),
// state dirs under the OS temp dir, `tether agent` invocations as child processes, and sidecars
// stopped by PID when a test ends, pass or fail.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CLI = path.join(ROOT, 'web/agent/cli.js');

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * The room secret the agent suites run under: tests/node/agent-sealed.test.mjs runs them again
 * with $TETHER_ROOM_SECRET set, which every `tether agent join` (the sidecar's transport) takes;
 * peers a test makes itself spread this into their createRelayTransport options.
 */
export function roomSecretOption(env = process.env) {
  return env.TETHER_ROOM_SECRET ? { secret: env.TETHER_ROOM_SECRET } : {};
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; fails naming `what` after `timeoutMs`. */
export async function waitFor(what, fn, { timeoutMs = 20_000, everyMs = 50 } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export class Harness {
  constructor(t) {
    this.base = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-agent-'));
    this.pids = new Set();
    this.transcript = []; // every stdout and stderr of every CLI run, for assertNoSecret
    t.after(() => this.cleanup());
  }

  /** Runs `tether ARGS` (any group); resolves {code, stdout, stderr}. */
  cli(args, { env = {}, input = null } = {}) {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...process.env, ...env },
        stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      if (input !== null) child.stdin.end(input);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => {
        this.transcript.push(stdout, stderr);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /**
   * Fails if `secret` (a ticket, a token) appears in any CLI output of this harness, in `extra`
   * texts (a relay's output), or in any file under the harness dir except `allowedFiles`
   * (the 0600 ticket files that exist to hold it).
   */
  assertNoSecret(secret, { extra = [], allowedFiles = [] } = {}) {
    assert.ok(secret && secret.length > 20, 'a real secret to look for');
    const probes = [secret, secret.slice(-24)]; // the signature's tail alone is a leak too
    const leak = (text) => probes.some((p) => text.includes(p));
    this.transcript.forEach((text, i) =>
      assert.ok(!leak(text), `output ${i} holds the secret:\n${text}`),
    );
    extra.forEach((text, i) => assert.ok(!leak(text), `extra ${i} holds the secret:\n${text}`));
    const allowed = new Set(allowedFiles.map((f) => path.resolve(f)));
    const walk = (d) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile() && !allowed.has(p))
          assert.ok(!leak(fs.readFileSync(p, 'latin1')), `${p} holds the secret`);
      }
    };
    walk(this.base);
  }

  dir(name) {
    const d = path.join(this.base, name);
    fs.mkdirSync(d, { recursive: true });
    return d;
  }

  /** Runs `tether GROUP ARGS --dir DIR --json` (GROUP: agent); resolves {code, stdout, stderr, json}. */
  run(dir, args, { env = {}, json = true, input = null, group = 'agent' } = {}) {
    const argv = [CLI, group, ...args, '--dir', dir, ...(json ? ['--json'] : [])];
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, argv, {
        env: { ...process.env, ...env },
        stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      if (input !== null) child.stdin.end(input);
      this.pids.add(child.pid);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => {
        this.pids.delete(child.pid);
        this.transcript.push(stdout, stderr);
        let parsed = null;
        try {
          parsed = JSON.parse(stdout.trim().split('\n').pop());
        } catch {}
        this.trackSidecar(dir);
        resolve({ code, stdout, stderr, json: parsed });
      });
    });
  }

  /** Runs and requires success; returns the parsed JSON. */
  async ok(dir, args, opts) {
    const r = await this.run(dir, args, opts);
    if (r.code !== 0 || !r.json)
      throw new Error(`tether agent ${args.join(' ')} failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json;
  }

  trackSidecar(dir) {
    try {
      const pid = Number.parseInt(fs.readFileSync(path.join(dir, 'sidecar.lock'), 'utf8'), 10);
      if (pid > 0) this.pids.add(pid);
    } catch {}
  }

  async join(dir, id, url, extra = [], opts = {}) {
    const r = await this.ok(
      dir,
      ['join', '--relay', url, '--room', 'lab', '--id', id, ...extra],
      opts,
    );
    this.pids.add(r.pid);
    // The sealed rerun (agent-sealed.test.mjs) must really run sealed, unless the test said
    // otherwise for this join.
    if (roomSecretOption(opts.env ? { ...process.env, ...opts.env } : process.env).secret) {
      const st = await this.ok(dir, ['status']);
      const bare = extra.includes('--no-secret') || st.transport === 'webrtc';
      assert.equal(
        st.encrypted,
        !bare,
        `sidecar '${id}' is ${st.encrypted ? '' : 'not '}encrypted`,
      );
    }
    return r;
  }

  /** Kills a sidecar without letting it clean up (a crash). */
  async crash(dir) {
    const pid = Number.parseInt(fs.readFileSync(path.join(dir, 'sidecar.lock'), 'utf8'), 10);
    process.kill(pid, 'SIGKILL');
    await waitFor(`pid ${pid} to die`, () => !alive(pid));
    return pid;
  }

  async cleanup() {
    for (const pid of this.pids) {
      // Only our own: a pid that exited may since belong to someone else's process.
      let cmd = '';
      try {
        cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {}
      if (alive(pid) && (cmd.includes('sidecar.js') || cmd.includes('cli.js'))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    }
    for (const pid of this.pids)
      for (let i = 0; i < 100 && fs.existsSync(`/proc/${pid}/cmdline`) && alive(pid); i++)
        await sleep(20);
    fs.rmSync(this.base, { recursive: true, force: true });
  }
}

// WebRTC tests run in a private network namespace (TOOLCHAIN.md); one helper serves every suite.
export { inNetns as inPrivateNetns } from '../../e2e/lib/netns.mjs';
