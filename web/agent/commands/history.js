// `tether agent history PEER`: asks PEER to replay what it may share with us (the bus caps and
// filters it); what we had not stored lands in the inbox.
import { formatEnv } from '../cli/format.js';
import { usage } from '../cli/context.js';
import { parseCount } from '../cli/values.js';

export default {
  name: 'history',
  usage: 'PEER [--count N]',
  summary: 'ask PEER to replay recent messages we may have missed',
  options: {
    count: {
      type: 'string',
      value: 'N',
      help: (l) =>
        `how many (at most ${l?.historyMaxRequest ?? 'the bus core’s cap'}; default ${l?.historyDefaultRequest ?? 'the core’s'})`,
    },
  },
  async run({ v, pos, out, call, needBus }) {
    const [peer] = pos;
    if (!peer) usage('history PEER: name the peer to ask');
    const max = needBus().limits.historyMaxRequest;
    const count = v.count === undefined ? undefined : parseCount('--count', v.count, max);
    const r = await call('history', { peer, count });
    const fresh = new Set(r.fresh ?? []);
    out(
      r,
      r.replayed.length
        ? [
            ...r.replayed.map((e) => `${fresh.has(e.id) ? 'NEW ' : 'had '} ${formatEnv(e)}`),
            `${fresh.size} of ${r.replayed.length} replayed message(s) were new (now in the inbox: \`tether agent read\`)`,
          ].join('\n')
        : `(nothing from ${peer} that this sidecar had not already received)`,
    );
  },
};
