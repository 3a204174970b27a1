// Child processes for the cockpit e2e tests: the Deno relay, the demo robot and Deno clients.
// Every child is tracked by PID and killed by PID (never by name) in `after`, even on failure.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoDir } from './fixtures.mjs';

const deno = join(repoDir, 'node_modules/.bin/deno'); // the real binary: its PID is Deno's
const env = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
const PERMS = [
  '--no-lock',
  '--no-prompt',
  '--unstable-net',
  '--allow-net=127.0.0.1',
  `--allow-read=${repoDir},/tmp`,
  '--allow-write=/tmp',
  '--allow-run=openssl,ffmpeg',
  '--allow-sys=networkInterfaces',
  '--allow-env',
];
const children = new Set();

/** Starts a Deno script; resolves once a stdout line matches `ready` (with the match). `stdin: 'pipe'` keeps its stdin open for the test to write to; `env` adds to its environment. */
export function startDeno(
  script,
  args,
  ready,
  timeoutMs = 60_000,
  { stdin = 'ignore', env: extraEnv = {} } = {},
) {
  const child = spawn(deno, ['run', ...PERMS, script, ...args], {
    cwd: repoDir,
    env: { ...env, ...extraEnv },
    stdio: [stdin, 'pipe', 'pipe'],
  });
  children.add(child);
  child.output = '';
  child.errors = '';
  child.stderr.on('data', (d) => (child.errors += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`${script} not ready in ${timeoutMs} ms:\n${child.output}\n${child.errors}`),
        ),
      timeoutMs,
    );
    child.stdout.on('data', (d) => {
      child.output += d;
      const m = child.output.match(ready);
      if (m && !child.matched) {
        child.matched = m;
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('exit', (code) => {
      children.delete(child);
      clearTimeout(timer);
      if (!child.matched)
        reject(new Error(`${script} exited with ${code}:\n${child.output}\n${child.errors}`));
    });
  });
}

/** Resolves once a started child's stdout has matched `pattern`; rejects, with what it printed, after `timeoutMs` or when it exits first. */
export async function waitForOutput(child, pattern, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(child.output)) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`exited before printing ${pattern}:\n${child.output}\n${child.errors}`);
    if (Date.now() > deadline)
      throw new Error(`no ${pattern} in ${timeoutMs} ms:\n${child.output}\n${child.errors}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRelay(args = [], extraEnv = {}) {
  const relay = await startDeno(
    'web/host/relay.js',
    ['--port', '0', ...args],
    /tether relay ready: (http:\/\/127\.0\.0\.1:(\d+))/,
    60_000,
    { env: extraEnv },
  );
  relay.http = relay.matched[1];
  return relay;
}

export function startRobot(http, args = [], options = {}) {
  return startDeno(
    'web/host/demo-robot.js',
    ['--relay', http, ...args],
    /welcomed by/,
    60_000,
    options,
  );
}

/** Runs a Deno client to completion and returns its last stdout line as JSON. */
export async function runClient(script, args, timeoutMs = 90_000) {
  const child = spawn(deno, ['run', ...PERMS, script, ...args], {
    cwd: repoDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const timer = setTimeout(() => kill(child), timeoutMs);
  const code = await new Promise((r) => child.on('exit', r));
  clearTimeout(timer);
  children.delete(child);
  const last = out.trim().split('\n').at(-1);
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(`${script} exited ${code} without a JSON result:\n${out}\n${err}`);
  }
}

export function kill(child) {
  if (child?.pid && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {}
  }
}

/** Kills every child still running, by PID. */
export function killAll() {
  for (const c of children) kill(c);
  children.clear();
}
