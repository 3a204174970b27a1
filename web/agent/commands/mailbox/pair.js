// `tether mailbox pair`: both ends of pairing (docs/mailbox.md § Pairing). The owner issues a
// single-use code (or accepts a pair request); a sender redeems the code, or asks without one and
// waits for the owner. The sender key lands in the state dir, never on the terminal.
import { files, readJson } from '../../state.js';
import { usage } from '../../cli/context.js';
import { iso } from '../../cli/format.js';

export default {
  name: 'pair',
  usage: 'MAILBOX [CODE] [--name NAME] | MAILBOX --accept PAIR',
  summary: 'owner: print a pairing code, or --accept a request; sender: pair with CODE (or ask)',
  details:
    'Run by the owner with no CODE, it prints a code and the command the sender runs. Run by a ' +
    'sender with the CODE, it pairs at once; without one it sends a pair request the owner ' +
    'accepts with --accept PAIR.',
  options: {
    name: {
      type: 'string',
      value: 'NAME',
      help: "the sender's name the owner sees (default: this state dir's agent id)",
    },
    accept: { type: 'string', value: 'PAIR', help: 'owner: accept the pair request PAIR' },
  },
  async run({ dir, dirArg, v, pos, creds, mailbox, out }) {
    const [ref, code, ...extra] = pos;
    if (extra.length) usage(`pair takes MAILBOX and at most one CODE (got ${pos.length} words)`);
    if (v.accept !== undefined) {
      const m = mailbox(ref, 'owner');
      const r = await m.service.accept(m.id, m.owned.ownerKey, v.accept);
      out(r, `accepted pair ${r.pair.pair} ('${r.pair.name}'): it may send to ${m.id} now`);
      return;
    }
    const m = mailbox(ref);
    if (m.owned && code === undefined) {
      const r = await m.service.issueCode(m.id, m.owned.ownerKey);
      const url = m.service.mailboxUrl(m.id);
      out(
        { ok: true, mailbox: m.id, url, code: r.code, expiresAt: r.expiresAt },
        [
          `pairing code ${r.code} (works once, until ${iso(r.expiresAt)})`,
          `  the sender runs: tether mailbox pair ${url} ${r.code} --name NAME`,
        ].join('\n'),
      );
      return;
    }
    const name = v.name ?? readJson(files(dir).config)?.id;
    if (!name) usage('pair MAILBOX CODE --name NAME: name yourself to the owner');
    const r = await m.service.pair(m.id, { name, code });
    creds.paired[m.id] = { url: m.url, senderKey: r.senderKey, pair: r.pair, name: r.name };
    creds.save();
    const shown = { ...r };
    delete shown.senderKey; // kept in the state dir, never printed
    out(
      { ...shown, mailbox: m.id, keys: creds.file },
      r.state === 'active'
        ? `paired with mailbox ${m.id} as '${r.name}' (pair ${r.pair}); send with: tether mailbox send ${m.id}${dirArg} TEXT...`
        : `asked mailbox ${m.id} to pair as '${r.name}' (pair ${r.pair}); the owner accepts with: tether mailbox pair ${m.id} --accept ${r.pair}`,
    );
  },
};
