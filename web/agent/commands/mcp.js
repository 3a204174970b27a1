// `tether mcp`: serves the agent bus to an MCP client over stdio (web/agent/mcp/server.js,
// docs/mcp.md). A group that is one command: `tether mcp [--dir DIR] [--relay URL --room ROOM
// --id ID]`. It runs until the client closes stdin; stdout carries only the protocol, and the
// log goes to stderr.
import { agentContext, usage } from '../cli/context.js';
import { JOIN_FLAGS } from '../mcp/agent-dir.js';
import join from './join.js';

const mcp = {
  name: 'mcp',
  usage: '[--dir DIR] [--relay ws://HOST:PORT/ --room ROOM --id ID]',
  summary: 'an MCP server over stdio: the bus as tools and the inbox as a resource, for AI agents',
  details: [
    'Its tools act on the state dir and talk to its sidecar. When no sidecar runs, the first tool',
    'that needs one joins the room the way `tether agent join` does: with --relay, --room and --id',
    'given here, else the settings an earlier join saved in the dir. The ticket comes from',
    '$TETHER_TICKET (set it in the MCP client’s env block) or the one saved by an earlier join.',
    'docs/mcp.md has the tools, the resource and the client config block.',
  ].join('\n'),
  options: {
    dir: { type: 'string', value: 'DIR', help: 'the state dir (one agent identity each)' },
    // The join flags, as join defines them: one wording, one set of checks.
    ...Object.fromEntries(JOIN_FLAGS.map((k) => [k, join.options[k]])),
  },
  async run(ctx) {
    if (ctx.pos.length) usage(`mcp takes no arguments (got '${ctx.pos[0]}')`);
    const api = ctx.needBus();
    const joinWith = Object.fromEntries(
      JOIN_FLAGS.filter((k) => ctx.v[k] !== undefined).map((k) => [k, ctx.v[k]]),
    );
    // Loaded here, not with the registry: the MCP SDK and its schemas take about 0.4 s to load,
    // which every other `tether` command would pay.
    const { serveStdio } = await import('../mcp/server.js');
    const { loadMailbox } = await import('@tether-rt/tether/mailbox');
    const mailboxLimits = (await loadMailbox()).limits;
    await serveStdio({
      dir: ctx.dir,
      joinWith,
      api,
      mailboxLimits,
      log: (s) => ctx.progress(`tether mcp: ${s}`),
    });
  },
};

export const MCP = {
  name: 'mcp',
  summary: mcp.summary,
  context: agentContext,
  command: mcp,
};
