// `tether mailbox ...`: the hosted mailbox from the command line (docs/mailbox.md § Command
// line), one file per command, registered in web/agent/commands/index.js. Keys live in the state
// dir (mailboxes.json); a sidecar running for that dir delivers owned mailboxes into its inbox.
import { mailboxContext } from './context.js';
import create from './create.js';
import pair from './pair.js';
import pairs from './pairs.js';
import read from './read.js';
import send from './send.js';
import status from './status.js';
import unpair from './unpair.js';

export const MAILBOX = {
  name: 'mailbox',
  summary: 'the hosted mailbox: text kept seven days for paired senders, with delivery status',
  note: '(keys in the state dir: --dir, or $TETHER_AGENT_DIR, or ~/.tether/agent)',
  globals: {
    dir: { type: 'string', value: 'DIR', help: 'the state dir holding the mailbox keys' },
    url: {
      type: 'string',
      value: 'URL',
      help: 'the mailbox service (http://HOST:PORT); default $TETHER_MAILBOX_URL',
    },
    json: { type: 'boolean', help: 'machine-readable output: one JSON object' },
  },
  context: mailboxContext,
  commands: [create, pair, pairs, unpair, send, read, status],
};
