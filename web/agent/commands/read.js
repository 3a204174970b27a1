// `tether agent read`: claims unread mail from the inbox into the archive (no sidecar needed;
// concurrent readers never return the same record: web/agent/store.js).
import { ensureDirs, readInbox } from '../store.js';
import { formatEnv } from '../cli/format.js';
import { parseCount } from '../cli/values.js';

export const READ_TAKE_MAX = 1000;
export const READ_TAKE_DEFAULT = 50;

export default {
  name: 'read',
  usage: '[--take N] [--peek]',
  summary: 'unread mail, oldest first (moved to the archive unless --peek)',
  options: {
    take: {
      type: 'string',
      value: 'N',
      help: `at most N messages, 0 to ${READ_TAKE_MAX} (default ${READ_TAKE_DEFAULT}; 0 consumes nothing)`,
    },
    peek: { type: 'boolean', help: 'leave the mail unread' },
  },
  async run({ dir, v, out, needBus }) {
    needBus(); // records on disk are checked by the bus core, as the sidecar does
    const take =
      v.take === undefined ? READ_TAKE_DEFAULT : parseCount('--take', v.take, READ_TAKE_MAX);
    const r = readInbox(ensureDirs(dir), { take, peek: !!v.peek });
    out(
      { ok: true, ...r },
      r.messages.map(formatEnv).join('\n') ||
        (take === 0 ? '(--take 0: nothing read)' : '(no unread mail)'),
    );
  },
};
