// `tether agent send PEER TEXT...`: a direct message, kept in the disk outbox until the transport
// accepts it (agent-bus-and-swarm.md § Delivery semantics). The words become the payload its type
// takes (the bus core's typedPayload, worded by web/agent/typed-payload.js); `respond` answers a
// command.
import { usage } from '../cli/context.js';
import { PAYLOAD_JSON_OPTION, payloadFrom, textFrom } from '../cli/values.js';
import { CLI_NAMES, typedPayload } from '../typed-payload.js';

function payload(v, words, needBus) {
  if (v['payload-json'] === undefined)
    return typedPayload(needBus(), v.type ?? 'chat', textFrom(words), {
      argsJson: v['args-json'],
      names: CLI_NAMES,
    });
  if (v['args-json'] !== undefined)
    usage('--payload-json is the whole payload: give the args inside it, not with --args-json');
  return payloadFrom(v, words, 'send');
}

/** The answer of the sidecar's send, for send and respond: sent, or queued and why. */
export function reportSent(r, to, { out, progress, dirArg }) {
  if (r.unknownPeer)
    progress(
      `warning: nobody named '${to}' has been in this room since this agent joined it${r.seen.length ? ` (seen: ${r.seen.join(', ')})` : ''}; the message waits in the outbox until '${to}' joins. A typo? Drop it with \`tether agent outbox drop ${r.id}${dirArg}\``,
    );
  out(
    r,
    r.state === 'sent'
      ? `sent ${r.id} to ${to}`
      : `queued ${r.id} for ${to}: ${r.reason}; it leaves, in order, once it can (\`tether agent outbox\` lists what waits)`,
  );
}

export default {
  name: 'send',
  usage: 'PEER TEXT... [--type T] [--topic T] [--args-json JSON] [--payload-json JSON]',
  summary: 'a direct message to PEER, kept on disk until the transport accepts it',
  details:
    'TEXT "-" reads the text from stdin. A chat or event is sent as {text}; --type command takes one word, the command\'s name, sent as {command, args?}; --type ack takes the id of the message it acknowledges, sent as {messageId}. Answer a command with `respond`.',
  options: {
    type: {
      type: 'string',
      value: 'T',
      help: 'chat (default), event, command or ack (command_response: use `respond`)',
    },
    topic: { type: 'string', value: 'T', help: 'a topic for the receiver to filter on' },
    'args-json': { type: 'string', value: 'JSON', help: "with --type command: the command's args" },
    'payload-json': PAYLOAD_JSON_OPTION,
  },
  async run({ v, pos, out, call, progress, needBus, dirArg }) {
    const [to, ...words] = pos;
    if (!to) usage('send PEER TEXT...: name the peer (see `tether agent peers`)');
    const r = await call('send', {
      to,
      type: v.type,
      topic: v.topic,
      payload: payload(v, words, needBus),
    });
    reportSent(r, to, { out, progress, dirArg });
  },
};
