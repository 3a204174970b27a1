// Credentials never reach a terminal or a log: room tickets are bearer credentials (anyone who
// holds one joins the room as its writer until it expires) and the sidecar's control token opens
// its mailbox. Everything the CLI prints and everything the sidecar logs passes through redact().
// A redacted ticket keeps its last four characters, so two tickets can still be told apart.
import { TICKET_VERSION } from '../edge/tickets.js';

const TICKET_RE = new RegExp(`\\b${TICKET_VERSION}\\.[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]{4,}`, 'g');
const TICKET_PARAM_RE = /([?&]ticket=)([^&\s#'"<>]+)/g;
const BEARER_RE = /(Bearer\s+)[A-Za-z0-9._~+/=-]+/g;
// Hosted mailbox owner and sender keys (docs/mailbox.md): kept in mailboxes.json, never shown.
const MAILBOX_KEY_RE = /\bmb[os]_[0-9a-f]{64}\b/g;

/** How a ticket is shown: never the ticket, only enough to tell two apart. */
export function maskTicket(ticket) {
  const t = String(ticket ?? '');
  return t ? `<ticket …${t.slice(-4)}>` : '<no ticket>';
}

/** `text` with every ticket, `?ticket=` value and bearer token replaced. */
export function redact(text) {
  return String(text)
    .replace(TICKET_PARAM_RE, (_, k, v) => `${k}${maskTicket(decodeSafe(v))}`)
    .replace(TICKET_RE, (t) => maskTicket(t))
    .replace(BEARER_RE, '$1<redacted>')
    .replace(MAILBOX_KEY_RE, (k) => `<mailbox key …${k.slice(-4)}>`);
}

function decodeSafe(v) {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
