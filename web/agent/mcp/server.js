// `tether mcp`: an MCP server over stdio (the official @modelcontextprotocol/sdk) through which an
// AI agent's MCP client reaches the bus (docs/mcp.md). It serves the tools of web/agent/mcp/
// tools.js and the inbox resource of web/agent/mcp/inbox.js for one state dir.
//
// Every answer is a result: bad arguments are refused by the tools' schemas, a refusal from the
// sidecar or the state dir is a tool error with its message, and even a bug in a tool is a tool
// error (its stack goes to stderr), so one bad call never ends the session. Every result and
// every log line passes through redact(): no ticket or token reaches the client.
import fs from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { UsageError } from '../cli/args.js';
import { redact } from '../redact.js';
import { AgentDir } from './agent-dir.js';
import { registerInbox } from './inbox.js';
import { lineGuard } from './line-guard.js';
import { mailboxTools } from './mailbox-tools.js';
import { fields, strictArgs } from './schemas.js';
import { TOOLS } from './tools.js';

/** @typedef {import('@modelcontextprotocol/sdk/types.js').CallToolResult} CallToolResult */

const PACKAGE = JSON.parse(
  fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
);

// Arrays and object members in one call's arguments, counted by the SDK before the schema runs:
// far above what any tool takes (a payload is bounded by the envelope anyway), low enough that a
// hostile call cannot make the schema walk millions of nodes.
const MAX_TOOL_INPUT_ELEMENTS = 20_000;
const LOG_QUOTE_MAX = 300; // of a protocol error, in our log
// One request line, in envelopes: every tool's arguments fit in one envelope, and JSON escaping at
// most sextuples a string; a longer line is refused (web/agent/mcp/line-guard.js).
const MAX_LINE_ENVELOPES = 8;

const INSTRUCTIONS = [
  'tether: messages, handoffs and files between agents in one room, through this agent’s sidecar.',
  'Peer ids come from peers. Mail arrives in the inbox: read consumes it, peek and the tether://inbox resource do not.',
  'send keeps a direct message until the peer can take it; broadcast reaches only who is online; handoff is for work that must not be lost (receipt shows it was stored).',
  'Files: swarm_offer a path, then peers swarm_fetch it by id.',
].join(' ');

/**
 * `value` with every string (keys too) passed through redact(): redacting the JSON text instead
 * could cut an escape sequence in half. Results nest no deeper than an envelope's payload, which
 * the bus core bounds.
 */
function redactDeep(value) {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), redactDeep(v)]));
  return value;
}

/**
 * A result object as MCP content: the JSON text (for every client) and structured content.
 * @returns {CallToolResult}
 */
function answer(obj) {
  const safe = redactDeep(obj);
  return { content: [{ type: 'text', text: JSON.stringify(safe) }], structuredContent: safe };
}

/**
 * A refusal or failure as a tool error: one message, never a stack trace.
 * @returns {CallToolResult}
 */
function refusal(message) {
  return { content: [{ type: 'text', text: redact(message) }], isError: true };
}

/** Refusals the tools mean (a usage error, the sidecar's answer, an exit code), not bugs. */
const isRefusal = (err) => err instanceof UsageError || Number.isInteger(err?.exitCode);

/**
 * Builds the server for `dir` (not connected yet).
 * @param {{dir: string, joinWith?: Record<string, string>, api: object, mailboxLimits: object,
 *   log: (s: string) => void}} o
 *   api: the loaded bus core and mailboxLimits the mailbox core's (they bound every schema)
 */
export function createTetherMcpServer({ dir, joinWith = {}, api, mailboxLimits, log }) {
  const limits = api.limits;
  const mcp = new McpServer(
    { name: 'tether', title: 'tether agent bus', version: PACKAGE.version },
    {
      instructions: INSTRUCTIONS,
      maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
      capabilities: { tools: {}, resources: {} },
    },
  );
  const agent = new AgentDir({ dir, joinWith, limits, log });
  const f = fields(limits, api.directSendTypes);
  for (const tool of [...TOOLS, ...mailboxTools(mailboxLimits)]) {
    mcp.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: strictArgs(tool.args(f)),
        annotations: { readOnlyHint: !!tool.readOnly, openWorldHint: !!tool.outward },
      },
      async (args, extra) => {
        const token = extra?._meta?.progressToken;
        // A notification written after the result is dropped by the client (the request is
        // over): the result waits for those sent while the tool ran.
        const notes = [];
        const ctx = {
          dir,
          agent,
          api,
          limits,
          /** Reports progress when the client asked for it (a progressToken). */
          progress: (progress, total, message) => {
            if (token === undefined) return;
            notes.push(
              extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, progress, total, message: redact(message) },
                })
                .catch(() => {}),
            );
          },
        };
        try {
          const result = await tool.run(args, ctx);
          await Promise.all(notes);
          return answer(result);
        } catch (err) {
          if (isRefusal(err)) return refusal(err.message);
          log(`tool ${tool.name} failed: ${err?.stack ?? err}`);
          return refusal(
            `tether mcp: the ${tool.name} tool failed unexpectedly (${err?.message ?? err}); this is a bug, the server goes on serving and its stderr has the details`,
          );
        }
      },
    );
  }
  const inbox = registerInbox(mcp, { dir, log });
  return { mcp, close: () => inbox.close() };
}

/**
 * Serves `dir` over this process's stdin and stdout until the client closes stdin.
 * @param {Parameters<typeof createTetherMcpServer>[0]} o
 */
export async function serveStdio(o) {
  const { mcp, close } = createTetherMcpServer(o);
  const maxLineBytes = MAX_LINE_ENVELOPES * o.api.limits.maxEnvelopeBytes;
  const input = lineGuard({
    maxLineBytes,
    onDropped: (bytes, id) => {
      const message = `the request is ${bytes} bytes, over the ${maxLineBytes} tether mcp reads in one message (a message the bus carries is at most ${o.api.limits.maxEnvelopeBytes} bytes of JSON): send less, or put the content in a file and offer it with swarm_offer`;
      o.log(
        `refused ${id === undefined ? 'a message without a readable id' : `request ${JSON.stringify(id)}`}: ${message}`,
      );
      if (id !== undefined)
        process.stdout.write(
          `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message } })}\n`,
        );
    },
  });
  process.stdin.pipe(input);
  // Lines reach the transport whole and bounded, so its own bound (which ends the session) is
  // never reached.
  const transport = new StdioServerTransport(input, process.stdout, {
    maxBufferSize: 2 * maxLineBytes,
  });
  /** @type {Promise<void>} */
  const closed = new Promise((resolve) => {
    transport.onclose = resolve;
    // The SDK's transport does not notice the end of stdin: the client has gone, so do we.
    process.stdin.once('end', () => transport.close());
    process.stdin.once('close', () => transport.close());
  });
  // A line that is not JSON-RPC is answered by nothing (there is no id to answer); it is logged
  // in one bounded line, and the session goes on.
  mcp.server.onerror = (err) =>
    o.log(
      `ignored: ${String(err?.message ?? err)
        .replace(/\s+/g, ' ')
        .slice(0, LOG_QUOTE_MAX)}`,
    );
  await mcp.connect(transport);
  o.log(`serving ${o.dir} over stdio`);
  await closed;
  close();
  await mcp.close().catch(() => {});
}
