// `tether rooms ticket`: mints a room ticket from the relay's secret, for local use (a dev relay,
// tests, the README's walk-through). In a deployment your server mints tickets for the users it
// knows (mintTicket from @tether-rt/tether/tickets, web/edge/tickets.js) and the secret never
// leaves it.
import { KINDS, MAX_TICKET_TTL_SECONDS, mintTicket } from '../../edge/tickets.js';
import { fail, usage } from '../cli/context.js';
import { parseDuration } from '../cli/values.js';
import { SECRET_FILE_OPTION, relaySecret } from './relay-secret.js';

const DEFAULT_TTL = '1h';

export default {
  name: 'ticket',
  usage: '--room ROOM --id ID [--kind agent|human] [--ttl 1h] [--secret-file FILE]',
  summary: "mint a ticket for ROOM from the relay's secret ($TICKET_SECRET), for local use",
  details: [
    'Prints the ticket alone on stdout, for `TETHER_TICKET=$(tether rooms ticket ...) tether agent join ...`',
    "(not as --ticket: a command line shows in `ps`, and npm's debug log keeps it).",
    'Production: your server mints tickets for the users it knows (mintTicket from',
    "@tether-rt/tether/tickets) and the relay's secret never leaves it.",
  ].join('\n'),
  options: {
    room: { type: 'string', value: 'ROOM', help: 'the room the ticket opens (no other)' },
    id: {
      type: 'string',
      value: 'ID',
      help: 'the writer the relay will trust (e.g. the agent id)',
    },
    kind: { type: 'string', value: 'KIND', help: `${KINDS.join(' or ')} (default agent)` },
    ttl: {
      type: 'string',
      value: 'DURATION',
      help: `how long it opens the room (default ${DEFAULT_TTL}, at most ${MAX_TICKET_TTL_SECONDS / 3600}h)`,
    },
    'secret-file': SECRET_FILE_OPTION,
  },
  async run({ v, emitSecret, json }) {
    if (!v.room || !v.id) usage('ticket needs --room ROOM and --id ID');
    const kind = v.kind ?? 'agent';
    if (!KINDS.includes(kind)) fail(`--kind is ${KINDS.join(' or ')} (got '${kind}')`);
    const ttlMs = parseDuration('--ttl', v.ttl ?? DEFAULT_TTL);
    if (ttlMs < 1000 || ttlMs > MAX_TICKET_TTL_SECONDS * 1000)
      fail(`--ttl must be from 1s to ${MAX_TICKET_TTL_SECONDS / 3600}h (got '${v.ttl}')`);
    const secret = relaySecret(v, "the relay's secret", '; the relay was started with it');
    let ticket;
    try {
      ticket = await mintTicket(secret, {
        writer: v.id,
        kind,
        room: v.room,
        ttlSeconds: Math.floor(ttlMs / 1000),
      });
    } catch (err) {
      fail(err.message.replace(/^tether tickets: /, ''));
    }
    if (json) {
      emitSecret(JSON.stringify({ ok: true, ticket, room: v.room, writer: v.id, kind }));
      return;
    }
    emitSecret(ticket);
  },
};
