// Shared folders and files in the sidecar, in the public implementation's shapes (agent-bus-notes.md):
// answering `shares`, `list-files` and `get-file` from our shares (web/agent/share-commands.js),
// running our own pulls (get-file; web/agent/pull.js moves the bytes and files), and taking or
// refusing files a peer sends unasked (web/agent/inbox-files.js), all over tether/bus's
// one-to-one transfer. receive() claims these envelopes, so they never land in the inbox as mail.
import path from 'node:path';
import { makeEnvelope } from '../envelope.js';
import { InboxFiles } from '../inbox-files.js';
import { Pulls } from '../pull.js';
import { answerShareCommand } from '../share-commands.js';
import { stateDirs } from '../store.js';
import { readJson } from '../state.js';

export class Shares {
  /**
   * @param {{dir: string, from: object, log: (msg: string) => void,
   *   whyNotNow: (peer: string) => string | null}} o
   */
  constructor({ dir, from, log, whyNotNow }) {
    this.dir = dir;
    this.from = from;
    this.log = log;
    this.whyNotNow = whyNotNow;
    this.pulls = null;
    this.inboxFiles = null;
    this.answer = null;
    this.missing = null;
  }

  /** The folders we share, as `share add` saved them. */
  shares() {
    return readJson(stateDirs(this.dir).shares) ?? {};
  }

  /** The share names we announce (`agent.shares`), as the public implementation lists them. */
  announced() {
    return Object.keys(this.shares()).map((name) => ({ name }));
  }

  /**
   * Pulls need tether/bus's one-to-one transfer; without it the sidecar runs, and pull says why.
   * @param {import('../../glue/bus.d.ts').BusApi | null} api
   * @param {import('../../peer/transport.d.ts').PeerTransport} transport
   * @param {{bus: import('../../glue/bus.d.ts').Bus, outbox: {enqueue(to: string, type: string, payload: unknown): unknown},
   *   mailbox: {store(env: object, info: object | null, received?: object): unknown}, room: string}} ctx
   */
  start(api, transport, { bus, outbox, mailbox, room }) {
    if (!api) {
      this.missing = 'tether/bus is not built into this branch';
      return;
    }
    // One receiver for pulls and unasked files: the receive caps hold across both.
    const receiver = api.createFileReceiver();
    const respond = (env, outcome) => bus.respond(env, outcome);
    this.pulls = new Pulls({
      api,
      receiver,
      respond,
      transport: () => transport,
      envelope: (to, type, payload, topic) => {
        const e = makeEnvelope({ from: this.from, type, to, topic, payload });
        return e.ok
          ? { ok: true, env: e.env, text: JSON.stringify(e.env) }
          : { ok: false, error: `${e.field} ${e.detail}` };
      },
      shares: () => this.shares(),
      whyNotNow: this.whyNotNow,
      log: this.log,
    });
    this.inboxFiles = new InboxFiles({
      api,
      receiver,
      dir: path.join(this.dir, 'downloads'),
      // The disk outbox: a refusal is kept until the transport takes it.
      send: (peer, type, payload) => outbox.enqueue(peer, type, payload),
      store: (env, received) => mailbox.store(env, null, received),
      log: this.log,
    });
    this.answer = {
      api,
      respond,
      shares: () => this.shares(),
      pulls: this.pulls,
      about: { room, identity: this.from },
      log: this.log,
    };
  }

  /** Takes the envelopes of a pull (either side); returns whether it took `env`. */
  receive(env, info) {
    const p = this.pulls;
    const inbox = this.inboxFiles;
    switch (env.type) {
      case 'command':
        // shares, list-files and get-file are answered here; any other command is mail.
        return !!this.answer && answerShareCommand(this.answer, info.peer, env);
      case 'command_response':
        return !!p?.response(info.peer, env);
      // A file answering one of our pulls is the pull's; any other is the inbox's to take or refuse.
      case 'file_offer':
        if (!p?.offer(info.peer, env)) inbox?.offer(info.peer, env);
        return true;
      case 'file_chunk':
        if (!p?.chunk(info.peer, env)) inbox?.chunk(info.peer, env);
        return true;
      case 'file_complete':
        if (!p?.complete(info.peer, env)) inbox?.complete(info.peer, env);
        return true;
      case 'file_ack':
        // The puller's receipt for a file we served: the transfer's end, not mail.
        p?.acked(info.peer, env);
        return true;
      default:
        return false;
    }
  }

  rpcHandlers() {
    return {
      pull: (a) =>
        this.pulls
          ? this.pulls.start(a.peer, a.share, a.path, a.to)
          : { ok: false, error: `pull is not available in this build: ${this.missing}` },
      'pull-status': (a) =>
        this.pulls
          ? this.pulls.status(a.id)
          : { ok: false, error: 'pull is not available in this build' },
    };
  }
}
