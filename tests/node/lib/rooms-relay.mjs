// The self-hosted room relay (web/host/rooms.js) under real Deno, for the agent tests that need
// real tickets: /rooms/<name>?ticket=<t>, 401 with its reason, 404 elsewhere. Stopped by PID
// when the test ends, pass or fail; its whole output is kept (tests check it holds no ticket).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { watchOutput } from '../../e2e/lib/child_output.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A port nothing listens on right now (for a relay that is down, or one restarted on it). */
export async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * @param {import('node:test').TestContext} t
 * @param {{secret: string, port?: number, dir?: string}} o  dir keeps the database across restarts
 */
export async function startRoomsRelay(t, { secret, port = 0, dir } = {}) {
  const d = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tether-rooms-'));
  if (!dir) t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  const child = spawn(
    path.join(ROOT, 'node_modules/.bin/deno'),
    [
      'run',
      '--no-lock',
      '--allow-net=127.0.0.1',
      `--allow-read=${ROOT},${d}`,
      `--allow-write=${d}`,
      '--allow-env',
      'web/host/rooms.js',
      '--port',
      String(port),
      '--db',
      path.join(d, 'rooms.sqlite'),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, TICKET_SECRET: secret, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = watchOutput(child, 'deno rooms.js');
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); // ours, by PID
    await exited;
  };
  t.after(stop);
  const [, bound] = await output.ready(/tether rooms ready: ws:\/\/127\.0\.0\.1:(\d+)\//);
  return { port: Number(bound), url: `ws://127.0.0.1:${bound}/`, dir: d, output: output.all, stop };
}
