// Compiled (never run) by tests/node/mailbox.test.mjs: uses `tether/mailbox` as a host would.
// The lines expecting an error prove the declarations are precise.
import { createDriver } from '../../web/glue/driver.js';
import { loadMailbox } from '@tether-rt/tether/mailbox';
import type {
  MailboxAction,
  MailboxApi,
  MailboxCore,
  MailboxErrorCode,
  MailboxEvent,
} from '@tether-rt/tether/mailbox';

export async function useMailbox(): Promise<void> {
  const api: MailboxApi = await loadMailbox();
  const door = api.frontDoor('POST', '/mailboxes', -1, false);
  if (!door.ok) {
    const code: MailboxErrorCode = door.error;
    const status: number = door.status;
    void [code, status];
    return;
  }
  const core: MailboxCore = api.createCore();
  core.loaded(0);
  const entropy = api.entropy();
  const id: string = door.route === 'create' ? api.mailboxIdFor(entropy) : door.mailbox;
  void id;
  core.handleRequest(1, { method: 'POST', target: '/mailboxes', entropy }, 0);
  const driver = createDriver<MailboxAction, MailboxEvent>(core, {
    perform(a) {
      if (a.kind === 'persist') core.handlePersisted(a.token, true, 0);
      if (a.kind === 'respond') void a.body.length;
      // @ts-expect-error kinds are a closed set
      if (a.kind === 'bogus') return;
    },
  });
  driver.drain();
  const retention: number = api.limits.retentionMs;
  void retention;
  // @ts-expect-error limits are read-only
  api.limits.maxTextBytes = 1;
  // @ts-expect-error error codes are a closed set
  const nope: MailboxErrorCode = 'teapot';
  void nope;
  const t: number | null = core.pollTimeout();
  void t;
  core.dispose();
}
