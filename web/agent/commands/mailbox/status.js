// `tether mailbox status MAILBOX ID`: what became of a message this state dir sent: stored,
// delivered (the owner's agent has it), read, or expired (nobody fetched it in seven days).
import { usage } from '../../cli/context.js';
import { iso } from '../../cli/format.js';

export default {
  name: 'status',
  usage: 'MAILBOX ID',
  summary: 'sender: stored, delivered, read or expired, for the message ID',
  async run({ pos, mailbox, out }) {
    const m = mailbox(pos[0], 'sender');
    if (!pos[1]) usage('status MAILBOX ID: give the message id `send` printed');
    const r = await m.service.status(m.id, m.paired.senderKey, pos[1]);
    const when = [
      `stored ${iso(r.storedAt)}`,
      r.deliveredAt !== undefined ? `delivered ${iso(r.deliveredAt)}` : null,
      r.readAt !== undefined ? `read ${iso(r.readAt)}` : null,
    ].filter(Boolean);
    out({ ...r, mailbox: m.id }, `${r.id}: ${r.status} (${when.join(', ')})`);
  },
};
