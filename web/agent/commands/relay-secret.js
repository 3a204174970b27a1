// The room relay's ticket secret, as `tether rooms ticket` and `tether rooms serve` take it:
// $TICKET_SECRET, or --secret-file FILE (a command line shows in `ps`).
import fs from 'node:fs';
import { MIN_SECRET_CHARS } from '../../edge/tickets.js';
import { fail } from '../cli/context.js';

export const SECRET_FILE_OPTION = {
  type: 'string',
  value: 'FILE',
  help: 'read the secret from FILE instead of $TICKET_SECRET',
};

/**
 * The secret from `v['secret-file']` or $TICKET_SECRET; fails, naming the fix, when too short.
 * `what` says what the secret is to this command, `note` (after the bound) where it comes from.
 */
export function relaySecret(v, what, note = '') {
  let secret;
  if (v['secret-file'] !== undefined) {
    try {
      secret = fs.readFileSync(v['secret-file'], 'utf8').trim();
    } catch (err) {
      fail(`cannot read --secret-file ${v['secret-file']} (${err.code})`);
    }
  } else secret = process.env.TICKET_SECRET ?? '';
  if (secret.length < MIN_SECRET_CHARS)
    fail(
      `set TICKET_SECRET to ${what} (at least ${MIN_SECRET_CHARS} characters${note}), or pass --secret-file FILE`,
    );
  return secret;
}
