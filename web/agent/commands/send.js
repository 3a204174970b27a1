// `tether agent send PEER TEXT...`: a direct message, kept in the disk outbox until the transport
// accepts it (agent-bus-and-swarm.md § Delivery semantics).
import { usage } from '../cli/context.js';
import { PAYLOAD_JSON_OPTION, payloadFrom } from '../cli/values.js';

export default {
  name: 'send',
  usage: 'PEER TEXT... [--type T] [--topic T] [--payload-json JSON]',
  summary: 'a direct message to PEER, kept on disk until the transport accepts it',
  details: 'TEXT "-" reads the text from stdin.',
  options: {
    type: {
      type: 'string',
      value: 'T',
      help: 'chat (default), command, command_response, event or ack',
    },
    topic: { type: 'string', value: 'T', help: 'a topic for the receiver to filter on' },
    'payload-json': PAYLOAD_JSON_OPTION,
  },
  async run({ v, pos, out, call, progress }) {
    const [to, ...words] = pos;
    if (!to) usage('send PEER TEXT...: name the peer (see `tether agent peers`)');
    const r = await call('send', {
      to,
      type: v.type,
      topic: v.topic,
      payload: payloadFrom(v, words, 'send'),
    });
    if (r.unknownPeer)
      progress(
        `warning: nobody named '${to}' has been in this room since this agent joined it${r.seen.length ? ` (seen: ${r.seen.join(', ')})` : ''}; the message waits in the outbox until '${to}' joins. A typo? Drop it with \`tether agent outbox drop ${r.id}\``,
      );
    out(
      r,
      r.state === 'sent'
        ? `sent ${r.id} to ${to}`
        : `queued ${r.id} for ${to}: ${r.reason}; it leaves, in order, once it can (\`tether agent outbox\` lists what waits)`,
    );
  },
};
