// `tether mailbox unpair MAILBOX PAIR`: the owner revokes a pairing (or declines a request).
import { usage } from '../../cli/context.js';

export default {
  name: 'unpair',
  usage: 'MAILBOX PAIR',
  summary: 'owner: revoke the pairing PAIR (its sender can no longer send)',
  async run({ pos, mailbox, out }) {
    const m = mailbox(pos[0], 'owner');
    if (!pos[1]) usage('unpair MAILBOX PAIR: name the pairing (see `tether mailbox pairs`)');
    const r = await m.service.unpair(m.id, m.owned.ownerKey, pos[1]);
    out({ ...r, mailbox: m.id }, `revoked pair ${r.pair.pair} ('${r.pair.name}')`);
  },
};
