// `tether mailbox read MAILBOX`: the owner reads the text waiting in the mailbox, oldest first,
// and marks it read (its senders see `read`; the text then leaves the mailbox) unless --peek.
import { iso } from '../../cli/format.js';

export default {
  name: 'read',
  usage: 'MAILBOX [--take N] [--since SEQ] [--peek]',
  summary: 'owner: unread messages, oldest first (marked read unless --peek)',
  options: {
    take: { type: 'string', value: 'N', help: 'at most N messages (the service bounds N)' },
    since: { type: 'string', value: 'SEQ', help: 'only messages after this seq (default 0)' },
    peek: { type: 'boolean', help: 'leave them unread' },
  },
  async run({ v, pos, mailbox, out }) {
    const m = mailbox(pos[0], 'owner');
    const { marked, ...r } = await readMailbox(m, { since: v.since, take: v.take, peek: v.peek });
    const lines = r.messages.map(
      (msg) => `[${iso(msg.storedAt)}] ${msg.from.name} (${msg.from.pair}) ${msg.id}: ${msg.text}`,
    );
    if (r.more) lines.push(`(more after seq ${r.cursor}: read again)`);
    out({ ...r, mailbox: m.id, markedRead: marked }, lines.join('\n') || '(no unread messages)');
  },
};

/**
 * The owner's read of mailbox `m` (as the context's mailbox() gives it): the unread messages
 * after `since`, marked read unless `peek`. `tether mcp`'s mailbox_read shares it.
 */
export async function readMailbox(m, { since = 0, take, peek = false }) {
  const r = await m.service.list(m.id, m.owned.ownerKey, { since, limit: take });
  let marked = [];
  if (!peek && r.messages.length) {
    const seqs = r.messages.map((msg) => msg.seq);
    marked = (await m.service.ack(m.id, m.owned.ownerKey, seqs, 'read')).updated;
  }
  return { ...r, marked };
}
