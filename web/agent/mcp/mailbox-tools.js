// The hosted mailbox tools (docs/mailbox.md; docs/mcp.md § Tools): mailbox_send, mailbox_read and
// mailbox_status, calling the service the way `tether mailbox send|read|status` do (the mailbox
// named by id or URL, the keys of the state dir, web/agent/mailbox-client.js). Every bound is the
// mailbox core's (tether/mailbox limits).
import { z } from 'zod';
import { mailboxContext } from '../commands/mailbox/context.js';
import { readMailbox } from '../commands/mailbox/read.js';
import { newId } from '../envelope.js';

const utf8 = (s) => Buffer.byteLength(s);

/** The mailbox a tool names, with the key `as` needs (the CLI's resolution and refusals). */
function mailboxOf(dir, ref, as) {
  const ctx = mailboxContext({
    values: { dir },
    positionals: [],
    io: { stdout() {}, stderr() {} },
    limits: null,
  });
  return ctx.mailbox(ref, as);
}

function bytesString(what, max, hint) {
  return z
    .string({ error: `${what} must be a string${hint ? ` (${hint})` : ''}` })
    .min(1, { error: `${what} is empty${hint ? `; give ${hint}` : ''}` })
    .refine((s) => utf8(s) <= max, {
      error: `${what} is over ${max} UTF-8 bytes, the mailbox's bound`,
    });
}

/** @param {import('../../glue/mailbox.d.ts').MailboxLimits} limits */
export function mailboxTools(limits) {
  const mailbox = bytesString(
    'mailbox',
    limits.maxTargetBytes,
    'its id, or the URL `tether mailbox create` printed',
  ).describe('the mailbox: its id (one this state dir knows) or its URL');
  const messageId = bytesString('id', limits.maxMessageIdBytes, 'the id mailbox_send returned');
  return [
    {
      name: 'mailbox_send',
      title: 'Leave text in a hosted mailbox',
      description:
        'Stores text in a paired mailbox for its owner, kept seven days; a resend with the same id stores nothing new. mailbox_status follows it: stored, delivered, read or expired.',
      outward: true,
      args: () => ({
        mailbox,
        text: bytesString('text', limits.maxTextBytes).describe(
          `the text, at most ${limits.maxTextBytes} UTF-8 bytes`,
        ),
        id: messageId
          .optional()
          .describe('the message id (default: a new one); reuse it to resend'),
      }),
      run: async (a, { dir }) => {
        const m = mailboxOf(dir, a.mailbox, 'sender');
        const r = await m.service.send(m.id, m.paired.senderKey, {
          id: a.id ?? newId(),
          text: a.text,
        });
        return { ...r, mailbox: m.id };
      },
    },
    {
      name: 'mailbox_read',
      title: 'Read a hosted mailbox',
      description:
        'The owner reads unread messages, oldest first; they are marked read (their senders see it) unless peek.',
      args: (f) => ({
        mailbox,
        take: z
          .number({ error: `take must be a number from 1 to ${limits.maxListCount}` })
          .int({ error: `take must be a whole number from 1 to ${limits.maxListCount}` })
          .min(1, { error: 'take must be at least 1' })
          .max(limits.maxListCount, { error: `take must be at most ${limits.maxListCount}` })
          .optional()
          .describe(`at most this many messages (at most ${limits.maxListCount})`),
        since: z
          .number({ error: 'since must be a seq number, 0 or more' })
          .int({ error: 'since must be a whole seq number' })
          .min(0, { error: 'since must be 0 or more' })
          .optional()
          .describe('only messages after this seq (default 0)'),
        peek: f.flag('peek', 'leave them unread'),
      }),
      run: async (a, { dir }) => {
        const m = mailboxOf(dir, a.mailbox, 'owner');
        const { marked, ...r } = await readMailbox(m, a);
        return { ...r, mailbox: m.id, markedRead: marked };
      },
    },
    {
      name: 'mailbox_status',
      title: 'What became of a mailbox message',
      description: 'For a message this state dir sent: stored, delivered, read or expired.',
      readOnly: true,
      args: () => ({ mailbox, id: messageId }),
      run: async (a, { dir }) => {
        const m = mailboxOf(dir, a.mailbox, 'sender');
        return { ...(await m.service.status(m.id, m.paired.senderKey, a.id)), mailbox: m.id };
      },
    },
  ];
}
