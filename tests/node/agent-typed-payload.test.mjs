// The payload `send --type T WORDS` and `respond` build, in the shapes a ninja-p2p peer acts on
// (docs/agent-bus.md § Payloads with fixed shapes): decided by the bus core (src/bus/
// typed_payload.hpp, through the WASM build), worded for the caller by
// web/agent/typed-payload.js. The command line's refusals come before any sidecar is asked (none
// runs here).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBus } from '@tether-rt/tether/bus';
import { UsageError } from '../../web/agent/cli/args.js';
import {
  CLI_NAMES,
  MCP_NAMES,
  responsePayload,
  typedPayload,
} from '../../web/agent/typed-payload.js';
import { Harness } from './lib/agent-harness.mjs';

const api = await loadBus();
const refused = (fn, re) => assert.throws(fn, (e) => e instanceof UsageError && re.test(e.message));

test('typedPayload: a command is {command, args?}, an ack {messageId}, chat and event {text}', () => {
  const cli = { names: CLI_NAMES };
  const typed = (type, text, o = cli) => typedPayload(api, type, text, o);
  assert.deepEqual(typed('command', 'deploy'), { command: 'deploy' });
  assert.deepEqual(typed('command', ' deploy ', { ...cli, argsJson: '{"env":"prod"}' }), {
    command: 'deploy',
    args: { env: 'prod' },
  });
  assert.deepEqual(typed('command', 'reset', { ...cli, argsJson: 'null' }), {
    command: 'reset',
    args: null,
  });
  assert.deepEqual(typed('ack', 'm1'), { messageId: 'm1' });
  assert.deepEqual(typed('chat', 'hello there'), { text: 'hello there' });
  assert.deepEqual(typed('event', 'built'), { text: 'built' });
  refused(() => typed('command', 'deploy now'), /one word.*--args-json/);
  refused(() => typed('command', ''), /needs the command's name.*--args-json/);
  refused(() => typed('ack', 'a b'), /one word, the id of the message/);
  refused(() => typed('command_response', 'done'), /tether agent respond/);
  refused(() => typed('command_response', 'done', { names: MCP_NAMES }), /respond tool/);
  refused(
    () => typed('chat', 'hi', { ...cli, argsJson: '{}' }),
    /--args-json goes with type command only/,
  );
  refused(() => typed('chat', ''), /give the text/);
});

test('responsePayload: {requestId, ok: true, result} or {requestId, ok: false, error}', () => {
  const answer = (id, o) => responsePayload(api, id, { ...o, names: CLI_NAMES });
  assert.deepEqual(answer('r1', { resultJson: '{"n":1}' }), {
    requestId: 'r1',
    ok: true,
    result: { n: 1 },
  });
  assert.deepEqual(answer('r1', {}), { requestId: 'r1', ok: true, result: null });
  assert.deepEqual(answer('r1', { error: 'no disk' }), {
    requestId: 'r1',
    ok: false,
    error: 'no disk',
  });
  refused(() => answer('r1', { resultJson: '1', error: 'x' }), /not both/);
  refused(() => answer('r1', { error: '' }), /give the error text/);
  refused(() => answer('', { resultJson: '1' }), /by its id/);
  refused(() => answer('r1', { resultJson: '{"a":' }), /--result-json must be valid JSON/);
  refused(
    () => responsePayload(api, 'r1', { resultJson: '[', names: MCP_NAMES }),
    /^result must be valid JSON/,
  );
});

test('the bus core decides, and JS only words it: bounds and splits that exist only in the core', () => {
  const cli = { names: CLI_NAMES };
  const { maxIdChars, maxErrorTextBytes, maxJsonDepth } = api.limits;
  // An id over the bus id bound, in an ack and in an answer.
  refused(
    () => typedPayload(api, 'ack', 'm'.repeat(maxIdChars + 1), cli),
    new RegExp(`no message id is longer than ${maxIdChars} characters \\(got ${maxIdChars + 1}\\)`),
  );
  assert.deepEqual(typedPayload(api, 'ack', 'm'.repeat(maxIdChars), cli), {
    messageId: 'm'.repeat(maxIdChars),
  });
  refused(
    () => responsePayload(api, 'r'.repeat(maxIdChars + 1), { names: CLI_NAMES }),
    new RegExp(`the command's id is ${maxIdChars + 1} characters`),
  );
  refused(() => typedPayload(api, 'ack', 'a\u0000b', cli), /no message id holds a NUL/);
  // Args nested past what an envelope carries (two levels sit above them).
  const nest = (n) => '['.repeat(n) + ']'.repeat(n);
  assert.ok(typedPayload(api, 'command', 'x', { ...cli, argsJson: nest(maxJsonDepth - 2) }).args);
  refused(
    () => typedPayload(api, 'command', 'x', { ...cli, argsJson: nest(maxJsonDepth - 1) }),
    new RegExp(`--args-json nests more than ${maxJsonDepth - 2} levels deep`),
  );
  refused(
    () => typedPayload(api, 'command', 'x', { ...cli, argsJson: '1e400' }),
    /--args-json must be valid JSON \(a number there is beyond any double/,
  );
  // The error text is cut as the core cuts every answer's (Bus::respond).
  const cut = responsePayload(api, 'r1', { error: 'e'.repeat(3000), names: CLI_NAMES });
  assert.equal(cut.error.length, maxErrorTextBytes);
  // A lone surrogate (JSON allows it in a JS string, not on the wire) is refused, not mangled.
  // (Embind's string conversion alone would send 'hi \ud800' as 'hi \u{10000}'.)
  // Each refusal names the input that holds it, as the caller spells it.
  for (const text of ['hi \ud800', '\ud800x', 'a\udc00'])
    refused(() => typedPayload(api, 'chat', text, cli), /^TEXT is not valid Unicode/);
  refused(() => typedPayload(api, 'ack', 'm\ud800', cli), /^TEXT is not valid Unicode/);
  refused(
    () => typedPayload(api, 'chat', 'hi \ud800', { names: MCP_NAMES }),
    /^text is not valid Unicode .*lone surrogate/,
  );
  refused(
    () => responsePayload(api, 'r\udbff', { resultJson: '1', names: CLI_NAMES }),
    /^REQUEST_ID is not valid Unicode/,
  );
  refused(
    () => responsePayload(api, 'r\udbff', { resultJson: '1', names: MCP_NAMES }),
    /^request_id is not valid Unicode/,
  );
  refused(
    () => responsePayload(api, 'r1', { error: 'bad \ud800', names: CLI_NAMES }),
    /^the error TEXT is not valid Unicode/,
  );
  refused(
    () => responsePayload(api, 'r1', { error: 'bad \ud800', names: MCP_NAMES }),
    /^error is not valid Unicode/,
  );
  assert.deepEqual(typedPayload(api, 'chat', 'emoji \u{1f600} ok', cli), {
    text: 'emoji \u{1f600} ok',
  });
  refused(() => typedPayload(api, 'announce', 'hi', cli), /--type announce is not sent from words/);
});

test('the core splits words where the \\s of JavaScript does, for every code point', () => {
  // Each chunk of code points, each between two letters: the words the core counts are the ones
  // `trim().split(/\s+/)` counts.
  const all = [];
  for (let c = 0; c <= 0x10ffff; c++) if (c < 0xd800 || c > 0xdfff) all.push(c);
  for (let i = 0; i < all.length; i += 2048) {
    const text = `x${all
      .slice(i, i + 2048)
      .map((c) => `${String.fromCodePoint(c)}x`)
      .join('')}`;
    const want = text.trim().split(/\s+/).filter(Boolean).length;
    const r = api.typedPayload('command', text);
    const got = r.ok ? 1 : r.count;
    assert.equal(got, want, `code points from U+${all[i].toString(16)}`);
  }
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
    // refused by the bus core only: the id bound, a type that is not words, nesting
    [['send', 'bob', '--type', 'ack', 'm'.repeat(129)], /no message id is longer than 128/],
    [['respond', 'bob', 'r'.repeat(129), 'ok'], /the command's id is 129 characters/],
    [['send', 'bob', '--type', 'bogus', 'hi'], /--type bogus is not sent from words/],
    [
      [
        'send',
        'bob',
        '--type',
        'command',
        'x',
        '--args-json',
        `${'['.repeat(63)}${']'.repeat(63)}`,
      ],
      /--args-json nests more than 62 levels deep/,
    ],
  ]) {
    const r = await h.run(D, args, { json: false });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want, args.join(' '));
  }
});
