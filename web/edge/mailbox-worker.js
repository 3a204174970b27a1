// The mailbox Worker (mailbox.wrangler.toml beside this file): the hosted mailbox's routes
// (/mailboxes/...) and one Durable Object per mailbox (mailbox-object.js), on its own WASM module
// (tether-mailbox: the mailbox core only). The rooms Worker, the edge's front door, hands it these
// routes over a service binding (routes.js).
import wasmModule from '../../build/wasm/tether-mailbox.wasm';
import '../glue/modules/tether-mailbox.js';
import { loadMailbox } from '../glue/mailbox.js';
import { defineMailboxObject, routeMailbox } from './mailbox-object.js';
import { notServedHere } from './routes.js';

/** @type {ReturnType<typeof loadMailbox> | null} */
let mailboxApi = null;
const mailbox = () => (mailboxApi ??= loadMailbox({ wasmModule }));

export const MailboxObject = defineMailboxObject({ init: mailbox });

export default {
  /** @param {Request} request @param {Record<string, any>} env */
  fetch(request, env) {
    return routeMailbox(request, env, mailbox) ?? notServedHere(request, 'the mailbox Worker');
  },
};
