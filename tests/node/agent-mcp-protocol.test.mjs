// `tether mcp` below the SDK's client: raw JSON-RPC lines on the real command's stdin, hostile
// ones among them (not JSON, not JSON-RPC, arguments that are not an object, too many elements,
// a payload thousands of levels deep, a request far over any bound), each answered or logged
// while the session goes on; and the line guard in front of the SDK's transport, chunk by chunk.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { lineGuard, requestId } from '../../web/agent/mcp/line-guard.js';
import { CLI, Harness } from './lib/agent-harness.mjs';

/** The real `tether mcp` with raw lines in and JSON-RPC messages out, by id. */
function rawMcp(t, h, dir) {
  const child = spawn(process.execPath, [CLI, 'mcp', '--dir', dir], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  h.pids.add(child.pid);
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  let stderr = '';
  const got = new Map();
  const waiting = new Map();
  child.stdout.on('data', (d) => {
    out += d;
    for (let i; (i = out.indexOf('\n')) >= 0;) {
      const m = JSON.parse(out.slice(0, i)); // the server writes nothing but JSON-RPC
      out = out.slice(i + 1);
      got.set(m.id, m);
      waiting.get(m.id)?.(m);
    }
  });
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    exited,
    stderr: () => stderr,
    line: (text) => child.stdin.write(`${text}\n`),
    /** Writes `text` (a request with `id`) and resolves its answer. */
    ask(id, text) {
      const answered = new Promise((r) => waiting.set(id, r));
      child.stdin.write(`${text}\n`);
      return answered;
    },
    request(id, method, params) {
      return this.ask(id, JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    },
    got,
  };
}

const call = (name, args) => ({ name, arguments: args });

test('raw JSON-RPC: garbage, malformed requests, hostile arguments and an oversize line are answered or logged, and the session goes on', async (t) => {
  const h = new Harness(t);
  const s = rawMcp(t, h, h.dir('alice'));
  s.line('this is not json');
  s.line('{"foo": 1}');
  const init = await s.request(1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '0' },
  });
  assert.equal(init.result.serverInfo.name, 'tether');
  assert.equal(init.result.capabilities.resources.subscribe, true);
  s.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));

  // arguments that are not an object: the request itself is malformed (a JSON-RPC error)
  for (const [id, args] of [
    [2, 'notanobject'],
    [3, null],
    [4, [1, 2]],
  ]) {
    const r = await s.request(id, 'tools/call', call('read', args));
    assert.match(r.error.message, /expected record.*arguments|arguments.*expected record/s);
  }
  // more members than any tool takes, counted before any schema runs
  const many = await s.request(
    5,
    'tools/call',
    call('peek', { junk: Array.from({ length: 25_000 }, (_, i) => i) }),
  );
  assert.equal(many.result.isError, true);
  assert.match(many.result.content[0].text, /more than the maximum of 20000 elements/);
  // a payload 15,000 levels deep (JSON.stringify would overflow the stack) is refused by depth
  const n = 15_000;
  const deep = await s.ask(
    6,
    `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"send","arguments":{"peer":"bob","payload":{"deep":${'['.repeat(n)}1${']'.repeat(n)}}}}}`,
  );
  assert.equal(deep.result.isError, true);
  assert.match(deep.result.content[0].text, /payload nests more than 63 levels deep.*flatten it/);

  // 12 MB in one request: dropped as it streams and answered by id, wherever the id is written
  const big = JSON.stringify(call('send', { peer: 'bob', text: 'q'.repeat(12_000_000) }));
  for (const [id, text] of [
    [7, `{"method":"tools/call","params":${big},"jsonrpc":"2.0","id":7}`], // the TS SDK's order
    ['py-8', `{"jsonrpc":"2.0","id":"py-8","method":"tools/call","params":${big}}`], // Python's
  ]) {
    const r = await s.ask(id, text);
    assert.equal(r.error.code, -32600);
    assert.match(
      r.error.message,
      /^the request is 120001\d\d bytes, over the 2097152 tether mcp reads in one message .*put the content in a file and offer it with swarm_offer$/,
    );
  }
  s.line(`{"method":"tools/call","params":${big}}`); // no id: logged only

  const list = await s.request(9, 'tools/list', {});
  assert.ok(
    list.result.tools.some((x) => x.name === 'send'),
    'still serving',
  );
  const resource = await s.request(10, 'resources/read', { uri: 'tether://nope' });
  assert.match(resource.error.message, /Resource tether:\/\/nope not found/);
  const read = await s.request(11, 'tools/call', call('read', {}));
  assert.deepEqual(read.result.structuredContent.messages, []);
  assert.equal(s.child.exitCode, null);

  const log = s.stderr();
  assert.match(log, /ignored: Unexpected token 'h', "this is not json" is not valid JSON/);
  assert.match(log, /refused a message without a readable id: the request is 120000\d\d bytes/);
  assert.ok(
    log.split('\n').every((l) => l.length < 600),
    'every log line is bounded',
  );
  assert.doesNotMatch(log, /\n\s+at /, 'no stack trace');

  s.child.stdin.end();
  assert.equal(await s.exited, 0, 'stdin closed: the server ends cleanly');
});

/** Pushes `chunks` through a guard; resolves the lines out and the drops reported. */
async function guard(chunks, maxLineBytes) {
  const drops = [];
  const g = lineGuard({ maxLineBytes, onDropped: (bytes, id) => drops.push([bytes, id]) });
  const out = [];
  g.on('data', (d) => out.push(d));
  for (const c of chunks) g.write(Buffer.from(c));
  g.end();
  await new Promise((r) => g.once('end', r));
  return { text: Buffer.concat(out).toString(), drops };
}

test('line guard: whole lines out however the bytes are split; a long line is dropped and reported with its id', async () => {
  const ok1 = '{"jsonrpc":"2.0","id":1,"method":"a"}';
  const long = `{"method":"b","params":{"t":"${'x'.repeat(100)}"},"jsonrpc":"2.0","id":2}`;
  const ok2 = '{"jsonrpc":"2.0","id":3,"method":"c"}';
  const input = `${ok1}\n${long}\n${ok2}\n`;
  // every split point, and one byte at a time
  const splits = [[input], [...input]];
  for (let i = 1; i < input.length; i++) splits.push([input.slice(0, i), input.slice(i)]);
  for (const chunks of splits) {
    const r = await guard(chunks, 64);
    assert.equal(r.text, `${ok1}\n${ok2}\n`, `split ${chunks.map((c) => c.length).join('+')}`);
    assert.deepEqual(r.drops, [[long.length, 2]]);
  }
  // a line exactly at the bound passes; the newline does not count
  assert.equal((await guard([`${'y'.repeat(64)}\n`], 64)).text, `${'y'.repeat(64)}\n`);
  // an unterminated tail is held, never passed on half
  assert.equal((await guard(['{"id":1'], 64)).text, '');
  assert.equal(requestId('{"method":"x","params":{"id":3', '"}},"id":4}'), 4);
  assert.equal(
    requestId('{"method":"x","params":{"id":3', '"}}}'),
    undefined,
    'nested ids are not the request’s',
  );
});

test('docs/mcp.md: its tools table names exactly the tools served, and its config block is JSON', async () => {
  const { TOOLS } = await import('../../web/agent/mcp/tools.js');
  const { mailboxTools } = await import('../../web/agent/mcp/mailbox-tools.js');
  const { loadMailbox } = await import('@tether-rt/tether/mailbox');
  const served = [...TOOLS, ...mailboxTools((await loadMailbox()).limits)].map((x) => x.name);
  const doc = fs.readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Tools'), doc.indexOf('### Bounds'));
  const documented = [...section.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) => m[1]);
  assert.deepEqual(documented, served);
  const block = /```json\n([\s\S]*?)\n```/.exec(doc);
  const cfg = JSON.parse(block[1]);
  assert.deepEqual(cfg.mcpServers.tether.args.slice(0, 2), ['tether', 'mcp']);
});

test('fetchProgress: each step forward once, in chunks, ending at every chunk when done', async () => {
  const { fetchProgress } = await import('../../web/agent/mcp/tools.js');
  const sent = [];
  const onStatus = fetchProgress((progress, total, message) =>
    sent.push([progress, total, message]),
  );
  const p = (have, bytes) => ({ name: 'w.bin', have, total: 11, size: 700_000, bytes });
  for (const st of [
    { state: 'running', progress: null }, // no offer seen yet
    { state: 'running', progress: p(0, 0) },
    { state: 'running', progress: p(3, 196_608) },
    { state: 'running', progress: p(3, 196_608) }, // no change: no notification
    { state: 'running', progress: p(8, 524_288) },
    { state: 'done', progress: p(8, 524_288) }, // the last report was before the end
  ])
    onStatus(st);
  assert.deepEqual(sent, [
    [0, 11, 'w.bin: 0/700000 bytes'],
    [3, 11, 'w.bin: 196608/700000 bytes'],
    [8, 11, 'w.bin: 524288/700000 bytes'],
    [11, 11, 'w.bin: 700000/700000 bytes'],
  ]);
});
