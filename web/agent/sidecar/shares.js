// Shared folders in the sidecar: serving `share.pull` requests from our shares and running our
// own pulls, over tether/bus's one-to-one transfer (web/agent/pull.js moves the bytes and files).
// receive() claims the envelopes that belong to a pull, so they never land in the inbox.
import { makeEnvelope } from '../envelope.js';
import { Pulls } from '../pull.js';
import { stateDirs } from '../store.js';
import { readJson } from '../state.js';

export const PULL_COMMAND = 'share.pull';

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
    this.missing = null;
  }

  /** The folders we share, as `share add` saved them. */
  shares() {
    return readJson(stateDirs(this.dir).shares) ?? {};
  }

  /** Pulls need tether/bus's one-to-one transfer; without it the sidecar runs, and pull says why. */
  start(api, transport) {
    if (!api) {
      this.missing = 'tether/bus is not built into this branch';
      return;
    }
    this.pulls = new Pulls({
      api,
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
  }

  /** Takes the envelopes of a pull (either side); returns whether it took `env`. */
  receive(env, info) {
    const p = this.pulls;
    switch (env.type) {
      case 'command':
        if (env.payload?.command !== PULL_COMMAND) return false;
        p?.serve(info.peer, env).catch((err) =>
          this.log(`serving a pull failed: ${err.stack ?? err}`),
        );
        return true;
      case 'command_response':
        return !!p?.response(info.peer, env);
      case 'file_offer':
        p?.offer(info.peer, env);
        return true;
      case 'file_chunk':
        p?.chunk(info.peer, env);
        return true;
      case 'file_complete':
        p?.complete(info.peer, env);
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
