// `tether mcp` under the MCP SDK's own client: StdioClientTransport spawns the real command, and
// the helpers call its tools the way an MCP client does. Every result and the server's stderr go
// into the harness transcript (assertNoSecret reads it); the server is closed when the test ends.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI } from './agent-harness.mjs';

/**
 * Starts `tether mcp ARGS` (or `command ARGS` for an installed bin) and connects a client.
 * @param {import('node:test').TestContext} t
 * @param {import('./agent-harness.mjs').Harness} h
 */
export async function startMcp(t, h, args, { env = {}, command = null } = {}) {
  const transport = new StdioClientTransport({
    command: command ?? process.execPath,
    args: command ? ['mcp', ...args] : [CLI, 'mcp', ...args],
    env: { ...process.env, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'tether-test', version: '0.0.0' });
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params));
  await client.connect(transport);
  const pid = transport.pid;
  h.pids.add(pid);
  t.after(async () => {
    await client.close().catch(() => {});
    h.transcript.push(stderr);
  });
  const record = (r) => {
    h.transcript.push(JSON.stringify(r));
    return r;
  };
  return {
    client,
    pid,
    updates,
    stderr: () => stderr,
    /** The raw CallToolResult. */
    call: async (name, args = {}, opts = {}) =>
      record(await client.callTool({ name, arguments: args }, undefined, opts)),
    /** A result that must succeed: its structured content. */
    async ok(name, args = {}, opts = {}) {
      const r = await this.call(name, args, opts);
      assert.ok(
        !r.isError,
        `${name} ${JSON.stringify(args).slice(0, 200)} failed: ${r.content?.[0]?.text}`,
      );
      assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, 'text is the JSON');
      return r.structuredContent;
    },
    /** A result that must be a tool error: its one text. */
    async err(name, args = {}) {
      const r = await this.call(name, args);
      assert.equal(
        r.isError,
        true,
        `${name} should have failed: ${JSON.stringify(r).slice(0, 400)}`,
      );
      assert.equal(r.content.length, 1);
      assert.doesNotMatch(r.content[0].text, /\n\s+at /, 'no stack trace');
      return r.content[0].text;
    },
  };
}
