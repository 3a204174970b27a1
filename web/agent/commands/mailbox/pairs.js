// `tether mailbox pairs MAILBOX`: the owner's list of pairings and pair requests.
import { iso } from '../../cli/format.js';

export default {
  name: 'pairs',
  usage: 'MAILBOX',
  summary: 'owner: the senders paired with MAILBOX and the pair requests waiting',
  async run({ pos, mailbox, out }) {
    const m = mailbox(pos[0], 'owner');
    const r = await m.service.pairs(m.id, m.owned.ownerKey);
    const lines = r.pairs.map(
      (p) =>
        `${p.pair}  ${p.state.padEnd(7)}  ${p.name}  since ${iso(p.createdAt)}` +
        (p.state === 'pending' ? `  (lapses ${iso(p.expiresAt)})` : ''),
    );
    out({ ...r, mailbox: m.id }, lines.join('\n') || '(no pairings)');
  },
};
