// What a `tether mailbox` command's run(ctx) gets: its flags and arguments, the state dir's
// mailbox keys, the mailbox it names (with the key it needs), the service's HTTP API, and output
// that respects --json (docs/mailbox.md § Command line).
import { agentContext, fail, usage } from '../../cli/context.js';
import {
  MAILBOX_URL_ENV,
  MailboxCredentials,
  MailboxService,
  mailboxRef,
} from '../../mailbox-client.js';

/** The agent context (state dir, flags, output, the sidecar's rpc) plus the mailbox's own. */
export function mailboxContext(o) {
  const base = agentContext(o);
  const { dir } = base;
  const creds = new MailboxCredentials(dir);
  const defaultUrl = o.values.url ?? process.env[MAILBOX_URL_ENV] ?? null;
  return {
    ...base,
    creds,
    /** The service at `url` (or --url / $TETHER_MAILBOX_URL). */
    service(url = defaultUrl) {
      if (!url)
        fail(
          `give the mailbox service: --url http://HOST:PORT, or set ${MAILBOX_URL_ENV} (the edge Worker's, or one you host: docs/mailbox.md § Hosting)`,
        );
      return new MailboxService(url);
    },
    /**
     * The mailbox the first argument names, as `owner` (needs its owner key here), `sender` (needs
     * a sender key here) or `any`: {id, service, owned, paired}.
     */
    mailbox(ref, as = 'any', what = 'MAILBOX') {
      if (!ref) usage(`name the mailbox: ${what} is its id or the URL \`create\` printed`);
      const r = mailboxRef(ref, creds, defaultUrl);
      if (!r.url)
        fail(
          `mailbox ${r.id} is not one this state dir knows; give its URL (http://HOST:PORT/mailboxes/${r.id}) or --url`,
        );
      const owned = creds.owned[r.id] ?? null;
      const paired = creds.paired[r.id] ?? null;
      if (as === 'owner' && !owned)
        fail(
          `this state dir (${dir}) holds no owner key for mailbox ${r.id}; run the command in the state dir that created it (--dir)`,
        );
      if (as === 'sender' && !paired)
        fail(
          `this state dir (${dir}) is not paired with mailbox ${r.id}; pair first: tether mailbox pair ${r.url}/mailboxes/${r.id} CODE`,
        );
      return { id: r.id, url: r.url, service: new MailboxService(r.url), owned, paired };
    },
    /** Tells a running sidecar of this state dir to pick up changed keys (none running: fine). */
    async syncSidecar() {
      try {
        await base.rpc('mailbox-sync');
      } catch {
        // no sidecar: it reads the keys when it starts
      }
    },
  };
}
