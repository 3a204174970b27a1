// The agent suites again, over the encrypted relay transport: each file below runs in a child
// `node --test` with $TETHER_ROOM_SECRET set, which every `tether agent join` takes (so every
// sidecar seals its envelopes) and which the peers the tests build themselves spread into their
// transport options (tests/node/lib/agent-harness.mjs roomSecretOption). A suite that passes in
// plaintext and fails sealed is a bug of the encrypted transport.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SUITES = [
  'agent-connect.test.mjs',
  'agent-messages.test.mjs',
  'agent-messaging.test.mjs',
  'agent-pull.test.mjs',
  'agent-swarm.test.mjs',
  'agent-ninja.test.mjs',
  'agent-mailbox.test.mjs',
  'agent-mcp.test.mjs',
  'agent-mcp-connect.test.mjs',
];

for (const suite of SUITES) {
  test(`sealed: ${suite} passes over the encrypted relay transport`, async () => {
    // A child of a test file is told so by NODE_TEST_CONTEXT and would skip its files: it must
    // run as a test run of its own.
    const { NODE_TEST_CONTEXT, ...env } = process.env;
    const child = spawn(
      process.execPath,
      ['--test', '--test-reporter=tap', path.join(HERE, suite)],
      {
        env: { ...env, TETHER_ROOM_SECRET: 'the agent suites run under this room secret' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise((resolve) => child.on('close', resolve));
    const failed = out.split('\n').filter((l) => /^\s*not ok /.test(l));
    assert.equal(code, 0, `${suite} failed sealed:\n${failed.join('\n')}\n${out.slice(-4000)}`);
    assert.match(out, /^# pass [1-9]/m, 'the suite ran its tests');
  });
}
