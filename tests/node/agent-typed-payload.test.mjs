// The payload `send --type T WORDS` and `respond` build (web/agent/typed-payload.js), in the shapes
// a ninja-p2p peer acts on (docs/agent-bus.md § Payloads with fixed shapes), and the command
// line's refusals, which come before any sidecar is asked (none runs here).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../web/agent/cli/args.js';
import {
  CLI_NAMES,
  MCP_NAMES,
  responsePayload,
  typedPayload,
} from '../../web/agent/typed-payload.js';
import { Harness } from './lib/agent-harness.mjs';

const refused = (fn, re) => assert.throws(fn, (e) => e instanceof UsageError && re.test(e.message));

test('typedPayload: a command is {command, args?}, an ack {messageId}, chat and event {text}', () => {
  const cli = { names: CLI_NAMES };
  assert.deepEqual(typedPayload('command', 'deploy', cli), { command: 'deploy' });
  assert.deepEqual(typedPayload('command', ' deploy ', { ...cli, args: { env: 'prod' } }), {
    command: 'deploy',
    args: { env: 'prod' },
  });
  assert.deepEqual(typedPayload('command', 'reset', { ...cli, args: null }), {
    command: 'reset',
    args: null,
  });
  assert.deepEqual(typedPayload('ack', 'm1', cli), { messageId: 'm1' });
  assert.deepEqual(typedPayload('chat', 'hello there', cli), { text: 'hello there' });
  assert.deepEqual(typedPayload('event', 'built', cli), { text: 'built' });
  refused(() => typedPayload('command', 'deploy now', cli), /one word.*--args-json/);
  refused(() => typedPayload('command', '', cli), /needs the command's name.*--args-json/);
  refused(() => typedPayload('ack', 'a b', cli), /one word, the id of the message/);
  refused(() => typedPayload('command_response', 'done', cli), /tether agent respond/);
  refused(() => typedPayload('command_response', 'done', { names: MCP_NAMES }), /respond tool/);
  refused(
    () => typedPayload('chat', 'hi', { ...cli, args: {} }),
    /--args-json goes with type command/,
  );
  refused(() => typedPayload('chat', '', cli), /give the text/);
});

test('responsePayload: {requestId, ok: true, result} or {requestId, ok: false, error}', () => {
  assert.deepEqual(responsePayload('r1', { result: { n: 1 } }), {
    requestId: 'r1',
    ok: true,
    result: { n: 1 },
  });
  assert.deepEqual(responsePayload('r1', {}), { requestId: 'r1', ok: true, result: null });
  assert.deepEqual(responsePayload('r1', { error: 'no disk' }), {
    requestId: 'r1',
    ok: false,
    error: 'no disk',
  });
  refused(() => responsePayload('r1', { result: 1, error: 'x' }), /not both/);
  refused(() => responsePayload('r1', { error: '' }), /give the error text/);
  refused(() => responsePayload('', { result: 1 }), /by its id/);
});

test('send and respond refuse, exit 2, before asking the sidecar: each line names the fix', async (t) => {
  const h = new Harness(t);
  const D = h.dir('alone');
  for (const [args, want] of [
    [['send', 'bob', '--type', 'command', 'deploy', 'now'], /one word.*--args-json/],
    [
      ['send', 'bob', '--type', 'command', 'deploy', '--args-json', '{bad'],
      /--args-json must be valid JSON/,
    ],
    [
      ['send', 'bob', '--type', 'command_response', 'done'],
      /`tether agent respond PEER REQUEST_ID`/,
    ],
    [['send', 'bob', '--type', 'ack', 'm1', 'm2'], /type ack takes one word/],
    [['send', 'bob', 'hi', '--args-json', '{}'], /--args-json goes with type command only/],
    [['respond', 'bob'], /respond PEER REQUEST_ID/],
    [['respond', 'bob', 'r1', '--error'], /give the error text/],
    [['respond', 'bob', 'r1', 'ok', '--result-json', '1'], /as TEXT or as --result-json, not both/],
    [['respond', 'bob', 'r1', 'x', '--error', '--result-json', '1'], /--error and --result-json/],
    [['respond', 'bob', 'r1', '--result-json', '{bad'], /--result-json must be valid JSON/],
  ]) {
    const r = await h.run(D, args, { json: false });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want, args.join(' '));
  }
});
