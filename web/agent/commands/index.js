// The command registry: every group of `tether` and its commands, one file per command. To add a
// command, write `commands/<name>.js` exporting {name, usage, summary, options?, run(ctx)} (or
// {name, summary, subcommands: [...]}) and list it here (a group that is one command, such as
// `tether mcp`, names it as `command` instead of listing `commands`); help, flag checking and "did you mean"
// come from these specs (web/agent/cli.js, cli/help.js). run(ctx) gets web/agent/cli/context.js.
import { agentContext, roomsContext } from '../cli/context.js';
import broadcast from './broadcast.js';
import handoff from './handoff.js';
import handoffs from './handoffs.js';
import history from './history.js';
import join from './join.js';
import leave from './leave.js';
import { MCP } from './mcp.js';
import notify from './notify.js';
import outbox from './outbox.js';
import peers from './peers.js';
import pruneArchive from './prune-archive.js';
import pull from './pull.js';
import read from './read.js';
import receipt from './receipt.js';
import respond from './respond.js';
import roomsServe from './rooms-serve.js';
import roomsTicket from './rooms-ticket.js';
import send from './send.js';
import share from './share.js';
import status from './status.js';
import swarm from './swarm.js';
import { MAILBOX } from './mailbox/index.js';

export const AGENT = {
  name: 'agent',
  summary: 'an agent in a room: messages, handoffs and files, through a sidecar per state dir',
  note: '(state dir: --dir, or $TETHER_AGENT_DIR, or ~/.tether/agent)',
  globals: {
    dir: { type: 'string', value: 'DIR', help: 'the state dir (one agent identity each)' },
    json: { type: 'boolean', help: 'machine-readable output: one JSON object' },
  },
  context: agentContext,
  commands: [
    join,
    leave,
    status,
    peers,
    send,
    respond,
    broadcast,
    read,
    notify,
    outbox,
    history,
    receipt,
    handoff,
    handoffs,
    pruneArchive,
    share,
    pull,
    swarm,
  ],
};

export const ROOMS = {
  name: 'rooms',
  summary: 'a room relay for local use, and its tickets',
  globals: { json: { type: 'boolean', help: 'machine-readable output: one JSON object' } },
  context: roomsContext,
  commands: [roomsServe, roomsTicket],
};

export const GROUPS = [AGENT, ROOMS, MAILBOX, MCP];
