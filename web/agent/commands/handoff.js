// `tether agent handoff PEER TEXT...`: confirmed handoffs (agent-bus-and-swarm.md § Local state
// and CLI boundaries): the bus retries the same envelope until PEER confirms storage or it expires.
import { fail, usage } from '../cli/context.js';
import { parseDuration, textFrom } from '../cli/values.js';

export default {
  name: 'handoff',
  usage: 'PEER TEXT... [--expires-in 24h]',
  summary: 'work kept queued until PEER confirms it stored it',
  details: 'TEXT "-" reads the text from stdin. PEER needs a current handoff-v1 announcement.',
  options: {
    'expires-in': {
      type: 'string',
      value: 'DURATION',
      help: (l) =>
        `give up after this long (default and most: ${l ? `${l.handoffMaxTtlMs / 3_600_000}h` : 'the bus core’s'})`,
    },
  },
  async run({ v, pos, out, call, needBus }) {
    const limits = needBus().limits;
    const [to, ...words] = pos;
    if (!to || !words.length) usage('handoff PEER TEXT...: name the peer and the work');
    const expiresInMs =
      v['expires-in'] === undefined
        ? limits.handoffMaxTtlMs
        : parseDuration('--expires-in', v['expires-in']);
    if (expiresInMs <= 0 || expiresInMs > limits.handoffMaxTtlMs)
      fail(`--expires-in must be more than 0 and at most ${limits.handoffMaxTtlMs / 3_600_000}h`);
    const request = textFrom(words);
    if (Buffer.byteLength(JSON.stringify(request)) > limits.handoffMaxRequestBytes)
      fail(
        `the handoff text is over ${limits.handoffMaxRequestBytes} bytes as a JSON string; put the detail in a shared file and hand off its path`,
      );
    const r = await call('handoff', { to, request, expiresInMs });
    // The bus refuses a handoff to a peer without a current handoff-v1 announcement, so one that
    // was accepted had it; what is left to say is whether it left yet and how long it is kept.
    out(
      r,
      `handoff ${r.id} ${r.sends > 0 ? 'sent to' : 'queued for'} ${to}; retried until ${to} confirms it stored it, or until ${new Date(r.expiresAt).toISOString()} (\`tether agent handoffs\` shows its state)`,
    );
  },
};
