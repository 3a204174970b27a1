// `tether mailbox send MAILBOX TEXT...`: deposits text as a paired sender. A resend with the same
// --id stores nothing new and reports the first one's status (docs/mailbox.md § Messages).
import { usage } from '../../cli/context.js';
import { textFrom } from '../../cli/values.js';
import { iso } from '../../cli/format.js';
import { newId } from '../../envelope.js';

export default {
  name: 'send',
  usage: 'MAILBOX TEXT... [--id ID]',
  summary: 'sender: leave TEXT in MAILBOX (kept seven days; see `status`)',
  details: 'TEXT "-" reads the text from stdin. Resending with the same --id never duplicates.',
  options: {
    id: {
      type: 'string',
      value: 'ID',
      help: 'the message id (default: a new random one); reuse it to resend safely',
    },
  },
  async run({ v, pos, mailbox, out }) {
    const [ref, ...words] = pos;
    const m = mailbox(ref, 'sender');
    const text = textFrom(words);
    if (!text) usage('send MAILBOX TEXT...: give the text (or "-" to read it from stdin)');
    const id = v.id ?? newId();
    const r = await m.service.send(m.id, m.paired.senderKey, { id, text });
    out(
      { ...r, mailbox: m.id },
      r.duplicate
        ? `already stored ${r.id} in ${m.id} (seq ${r.seq}): ${r.status}`
        : `stored ${r.id} in ${m.id} (seq ${r.seq}; text kept until ${iso(r.expiresAt)})`,
    );
  },
};
