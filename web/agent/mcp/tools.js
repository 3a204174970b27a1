// The `tether mcp` tools (docs/mcp.md § Tools): the agent command line's operations for an MCP
// client. Each calls what the matching `tether agent` command calls (the sidecar's control API
// for the room, the state dir for mail and receipts), so the rules, bounds and messages are the
// CLI's. A tool is {name, title, description, args(fields) -> zod shape, readOnly?, outward?,
// run(a, ctx)}: readOnly changes nothing, outward sends what it is given to other peers (an MCP
// client may ask its user first), and run resolves the result object or throws a refusal
// (web/agent/mcp/server.js answers it).
import path from 'node:path';
import { fail } from '../cli/context.js';
import { READ_TAKE_DEFAULT } from '../commands/read.js';
import { findReceipts } from '../commands/receipt.js';
import { followFetch } from '../commands/swarm.js';
import { ensureDirs, readInbox } from '../store.js';
import { MCP_NAMES, responsePayload, typedPayload } from '../typed-payload.js';

/** read and peek: the inbox, oldest first; read moves what it returns to the archive. */
function inbox(peek) {
  return ({ take = READ_TAKE_DEFAULT }, { dir }) => {
    const r = readInbox(ensureDirs(dir), { take, peek });
    return { ok: true, ...r, consumed: !peek && r.messages.length > 0 };
  };
}

/** The payload of a send or broadcast: {text}, or the given object; never both, never neither. */
function payloadOf({ text, payload }) {
  if ((text === undefined) === (payload === undefined))
    fail('give either text (sent as {text}) or payload (a JSON object), not both and not neither');
  return payload ?? { text };
}

/** A value as the JSON text the bus core parses (undefined stays not given). */
const jsonText = (v) => (v === undefined ? undefined : JSON.stringify(v));

/**
 * A send's payload: the given object, or the shape its type takes from text (the bus core's
 * typedPayload, worded by typed-payload.js).
 */
function sendPayload(a, api) {
  const payload = payloadOf(a);
  if (a.payload === undefined)
    return typedPayload(api, a.type ?? 'chat', a.text, {
      argsJson: jsonText(a.args),
      names: MCP_NAMES,
    });
  if (a.args !== undefined) fail('payload is the whole payload: give the args inside it');
  return payload;
}

/**
 * A direct message through the sidecar's disk outbox (send, respond); a name never seen in the
 * room is refused unless allow_unseen.
 */
async function sendDirect(agent, a, type, payload) {
  const r = await agent.rpc('send', {
    to: a.peer,
    type,
    topic: a.topic,
    payload,
    refuseUnseen: !a.allow_unseen,
  });
  if (!r.ok && r.unknownPeer)
    fail(
      `${r.error}; check the name (the peers tool lists who is here), or pass allow_unseen: true to queue it until '${a.peer}' joins`,
    );
  if (!r.ok) fail(r.error);
  return r;
}

const allowUnseen = (f) =>
  f.flag('allow_unseen', 'queue the message even if nobody of that name has been in the room yet');

/**
 * A followFetch status callback reporting each step forward as MCP progress, in chunks: MCP
 * progress must increase with every notification, and a done fetch ends at every chunk.
 * @param {(progress: number, total: number, message: string) => void} report
 */
export function fetchProgress(report) {
  let shown = -1;
  return ({ state, progress: p }) => {
    if (!p) return;
    const done = state === 'done';
    const chunks = done ? p.total : p.have;
    if (chunks <= shown) return;
    shown = chunks;
    report(chunks, p.total, `${p.name}: ${done ? p.size : p.bytes}/${p.size} bytes`);
  };
}

export const TOOLS = [
  {
    name: 'status',
    title: 'Sidecar status',
    description:
      "This agent's id, room and relay, whether its sidecar is in the room (and why not, when it is not), and who is online.",
    readOnly: true,
    args: () => ({}),
    run: (_, { agent }) => agent.call('status'),
  },
  {
    name: 'peers',
    title: 'Peers in the room',
    description:
      'Everyone in the room: id, display name, online or not, role, announced skills (handoff-v1 means it takes handoffs).',
    readOnly: true,
    args: () => ({}),
    run: (_, { agent }) => agent.call('peers'),
  },
  {
    name: 'send',
    outward: true,
    title: 'Send a direct message',
    description:
      'A direct message to one peer. It is kept on disk until the transport takes it, so a peer that is offline gets it when it joins. A name nobody has used in this room is refused (likely a typo) unless allow_unseen is true.',
    args: (f) => ({
      peer: f.peer,
      text: f.text.optional(),
      payload: f.payload.optional(),
      type: f.type,
      args: f.args,
      topic: f.topic,
      allow_unseen: allowUnseen(f),
    }),
    run: (a, { agent, api }) => sendDirect(agent, a, a.type, sendPayload(a, api)),
  },
  {
    name: 'respond',
    outward: true,
    title: "Answer a peer's command",
    description:
      'Answers a command a peer sent (read shows its id) with command_response {requestId, ok: true, result}, or {requestId, ok: false, error} when error is given. Kept on disk until the transport takes it, like send.',
    args: (f) => ({
      peer: f.peer,
      request_id: f.commandId,
      result: f.result,
      error: f.error,
      allow_unseen: allowUnseen(f),
    }),
    run: (a, { agent, api }) =>
      sendDirect(
        agent,
        a,
        'command_response',
        responsePayload(api, a.request_id, {
          resultJson: jsonText(a.result),
          error: a.error,
          names: MCP_NAMES,
        }),
      ),
  },
  {
    name: 'broadcast',
    outward: true,
    title: 'Broadcast to the room',
    description:
      'A message to every peer online now (best effort: it is not kept for absent peers).',
    args: (f) => ({ text: f.text.optional(), payload: f.payload.optional(), topic: f.topic }),
    run: (a, { agent }) => agent.call('broadcast', { topic: a.topic, payload: payloadOf(a) }),
  },
  {
    name: 'read',
    title: 'Read new mail',
    description:
      'Unread messages, oldest first, each with its sender, type, topic, id and payload; they move to the archive (not returned again). Handoffs arrive here too.',
    args: (f) => ({ take: f.take }),
    run: inbox(false),
  },
  {
    name: 'peek',
    title: 'Peek at new mail',
    description: 'Unread messages, oldest first, left unread (read consumes them).',
    readOnly: true,
    args: (f) => ({ take: f.take }),
    run: inbox(true),
  },
  {
    name: 'history',
    title: 'Ask a peer for history',
    description:
      'Asks a peer to replay recent messages it may share with us (broadcasts, and messages to or from us); the ones we had not received land in the inbox, listed under fresh.',
    args: (f) => ({ peer: f.peer, count: f.historyCount }),
    run: (a, { agent }) => agent.call('history', { peer: a.peer, count: a.count }),
  },
  {
    name: 'handoff',
    outward: true,
    title: 'Hand off work',
    description:
      'Work that must not be lost: the peer (it needs handoff-v1, see peers) gets it until it confirms it stored it, retried until then or until it expires. Its state is in handoffs, its stored receipt in receipt.',
    args: (f) => ({ peer: f.peer, request: f.handoffRequest, expires_in_ms: f.expiresInMs }),
    run: (a, { agent, limits }) =>
      agent.call('handoff', {
        to: a.peer,
        request: a.request,
        expiresInMs: a.expires_in_ms ?? limits.handoffMaxTtlMs,
      }),
  },
  {
    name: 'handoffs',
    title: 'Sent handoffs',
    description: 'The handoffs this agent sent: pending, stored (the peer confirmed) or expired.',
    readOnly: true,
    args: () => ({}),
    run: (_, { agent }) => agent.call('handoffs'),
  },
  {
    name: 'receipt',
    title: 'Receipts for a request',
    description:
      "What a peer reported about one of our messages or handoffs: its acks and command responses, and a handoff's stored receipt. Consumes nothing.",
    readOnly: true,
    args: (f) => ({ peer: f.peer, request_id: f.requestId }),
    run: (a, { dir, api }) => {
      const receipts = findReceipts(dir, api, a.peer, a.request_id);
      return { ok: true, peer: a.peer, requestId: a.request_id, receipts };
    },
  },
  {
    name: 'swarm_offer',
    outward: true,
    title: 'Offer a file',
    description:
      'Offers a file to the room; peers fetch it by its id (its SHA-256) from everyone who holds it. Offered again after a sidecar restart.',
    args: (f) => ({ path: f.path }),
    run: (a, { agent }) => agent.call('swarm-offer', { path: path.resolve(a.path) }),
  },
  {
    name: 'swarm_list',
    title: 'Files offered',
    description: 'Files offered in the room, ours too: id, name, size, who offers them.',
    readOnly: true,
    args: () => ({}),
    run: (_, { agent }) => agent.call('swarm-list'),
  },
  {
    name: 'swarm_fetch',
    title: 'Fetch a file',
    description:
      'Downloads a file by id from every peer that holds it, each chunk and the whole verified against the id, into a folder (never over an existing file). Waits until it is saved, with progress, unless wait is false (then swarm_status follows it).',
    args: (f) => ({
      file_id: f.fileId,
      to: f.folder,
      wait: f.flag('wait', 'wait until the file is saved (default true)'),
    }),
    run: async (a, { agent, progress }) => {
      const to = path.resolve(a.to);
      await agent.call('swarm-fetch', { fileId: a.file_id, to });
      if (a.wait === false) return { ok: true, fileId: a.file_id, to, state: 'running' };
      const st = await followFetch(
        (cmd, args) => agent.call(cmd, args),
        a.file_id,
        fetchProgress(progress),
      );
      return { ok: true, ...st.result, path: path.join(to, st.result.name) };
    },
  },
  {
    name: 'swarm_status',
    title: 'A fetch in progress',
    description: 'The state of a fetch this sidecar runs: running (with progress), done or failed.',
    readOnly: true,
    args: (f) => ({ file_id: f.fileId }),
    run: (a, { agent }) => agent.call('swarm-status', { fileId: a.file_id }),
  },
];
