// `tether rooms serve` (web/agent/commands/rooms-serve.js, web/host/rooms-node.js): the room relay
// a user with only the npm package runs, as a real process on 127.0.0.1, dialed by real `ws`
// clients running the room client core. What the edge and the Deno host promise holds here too:
// tickets checked at the upgrade (a refusal says why, over HTTP), the admission limits, hostile
// frames closing only their own socket, and a clean stop.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { createRoomClient } from '../../web/glue/relay.js';
import { mintTicket } from '../../web/edge/tickets.js';
import { watchOutput } from '../e2e/lib/child_output.mjs';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/agent/cli.js');
const SECRET = randomBytes(32).toString('hex');

/** Runs `tether rooms serve ARGS --json` until its ready line; stops it when the test ends. */
async function serve(t, args = [], env = {}) {
  const child = spawn(process.execPath, [CLI, 'rooms', 'serve', '--port', '0', '--json', ...args], {
    env: { ...process.env, TICKET_SECRET: SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const output = watchOutput(child, 'tether rooms serve');
  const [line] = await output.ready(/^\{.*\n/m); // --json: the ready line is one JSON object
  return { ready: JSON.parse(line), child, exited, stderr: output.stderr };
}

/** A room client on a real socket: `sent` its writes, `settle()` until quiet. */
async function member(t, port, writer, { ticket } = {}) {
  const tk = ticket ?? (await mintTicket(SECRET, { writer, kind: 'agent', room: 'lab' }));
  const ws = new WebSocket(`ws://127.0.0.1:${port}/rooms/lab?ticket=${encodeURIComponent(tk)}`);
  t.after(() => ws.terminate());
  // policyVersion 1: what the self-hosted relay runs (as the edge's POLICY_VERSION default).
  const client = createRoomClient({
    room: 'lab',
    origin: `${writer}-tab`,
    writer,
    policyVersion: 1,
  });
  ws.on('message', (data) => {
    for (const out of client.receive(data.toString())) ws.send(out);
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => reject(Object.assign(new Error(body), { status: res.statusCode })));
    });
    ws.once('error', reject);
  });
  ws.send(client.hello());
  return { ws, client };
}

async function until(what, fn) {
  for (let i = 0; i < 400; i++) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('tether rooms serve: two members converge, a bad ticket is refused with its reason, a hostile frame closes only its socket, SIGTERM stops it', async (t) => {
  const relay = await serve(t);
  const { port } = relay.ready;
  assert.equal(relay.ready.ok, true);
  assert.equal(relay.ready.url, `ws://127.0.0.1:${port}/`);
  const alice = await member(t, port, 'alice');
  const bob = await member(t, port, 'bob');
  await until('both welcomed', () => alice.client.welcomed && bob.client.welcomed);
  alice.ws.send(alice.client.write([{ kind: 'set', path: [], next: { plan: 'ship' } }]));
  await until("bob sees alice's write", () => bob.client.value().plan === 'ship');
  bob.ws.send(bob.client.write([{ kind: 'set', path: ['by'], next: 'bob' }]));
  await until("alice sees bob's", () => alice.client.value().by === 'bob');
  assert.equal(alice.client.unacked, 0);

  // A ticket for another room, and one signed with another secret: HTTP 401 at the upgrade.
  const other = await mintTicket(SECRET, { writer: 'eve', kind: 'agent', room: 'elsewhere' });
  await assert.rejects(member(t, port, 'eve', { ticket: other }), (e) => e.status === 401);
  const forged = await mintTicket(randomBytes(32).toString('hex'), { writer: 'eve', room: 'lab' });
  await assert.rejects(
    member(t, port, 'eve', { ticket: forged }),
    (e) => e.status === 401 && /signature/.test(e.message),
  );
  // Plain HTTP on the endpoint: told to upgrade.
  const plain = await fetch(`http://127.0.0.1:${port}/rooms/lab`);
  assert.equal(plain.status, 426);

  // Garbage, then a frame past maxFrameBytes: each closes its own socket, and the room goes on.
  const mallory = await member(t, port, 'mallory');
  const closedWith = (ws) => new Promise((resolve) => ws.once('close', (code) => resolve(code)));
  const garbage = closedWith(mallory.ws);
  mallory.ws.send('{"t":"env","room":"lab","env":');
  assert.equal(await garbage, 1007);
  const big = await member(t, port, 'big');
  const oversized = closedWith(big.ws);
  big.ws.send('x'.repeat(300 * 1024));
  assert.equal(await oversized, 1009);
  alice.ws.send(alice.client.write([{ kind: 'set', path: ['after'], next: 1 }]));
  await until('the room still relays', () => bob.client.value().after === 1);

  relay.child.kill('SIGTERM');
  assert.deepEqual(await relay.exited, { code: 0, signal: null });
  assert.match(relay.stderr(), /tether rooms: stopping/);
});

test('tether rooms serve --db: the rooms survive a restart where node:sqlite exists, else the fix is named', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-rooms-serve-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'rooms.sqlite');
  let hasSqlite = true;
  try {
    await import('node:sqlite');
  } catch {
    hasSqlite = false;
  }
  if (!hasSqlite) {
    const child = spawn(process.execPath, [CLI, 'rooms', 'serve', '--port', '0', '--db', db], {
      env: { ...process.env, TICKET_SECRET: SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 2);
    assert.match(stderr, /--db needs node:sqlite.*Node 22\.5 or newer.*leave out --db/);
    return;
  }
  const first = await serve(t, ['--db', db]);
  const a = await member(t, first.ready.port, 'alice');
  await until('welcomed', () => a.client.welcomed);
  a.ws.send(a.client.write([{ kind: 'set', path: [], next: { kept: true } }]));
  await until('acknowledged', () => a.client.unacked === 0 && a.client.seq === 1);
  first.child.kill('SIGTERM');
  await first.exited;
  const second = await serve(t, ['--db', db]);
  const b = await member(t, second.ready.port, 'bob');
  await until('bob hydrated from the file', () => b.client.value().kept === true);
});

test('tether rooms serve: without a secret, or with a bad flag, it says what to do', async () => {
  const run = (args, env) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, 'rooms', 'serve', ...args], {
        env: { ...process.env, TICKET_SECRET: '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
  const noSecret = await run(['--port', '0'], {});
  assert.equal(noSecret.code, 2);
  assert.match(noSecret.stderr, /set TICKET_SECRET to the secret tickets are minted with/);
  const badPort = await run(['--port', 'eighty'], { TICKET_SECRET: SECRET });
  assert.equal(badPort.code, 2);
  assert.match(badPort.stderr, /--port is a TCP port, 0 to 65535 \(got 'eighty'\)/);
  const badLimits = await run(['--port', '0', '--limits', '{maxFrameBytes'], {
    TICKET_SECRET: SECRET,
  });
  assert.equal(badLimits.code, 2);
  assert.match(badLimits.stderr, /--limits is JSON/);
});
