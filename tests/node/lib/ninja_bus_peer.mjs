// A hand-built ninja-p2p 0.2.2 peer for the agent tests (agent-bus-notes.md § The envelope, § Bus
// messages): no tether bus code. It joins the room through the relay transport (the same wire the
// sidecar uses), sends envelopes as the public implementation writes them (many straight from
// fixtures/bus/ninja.json, written there by hand), and records what it receives, so a test can
// wait for the answers it expects and check their shapes.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { createRelayTransport } from '../../../web/peer/relay-transport.js';
import { roomSecretOption, waitFor } from './agent-harness.mjs';

/** fixtures/bus/ninja.json's exchanges by name. */
export const ninjaExchanges = Object.fromEntries(
  JSON.parse(
    readFileSync(new URL('../../../fixtures/bus/ninja.json', import.meta.url), 'utf8'),
  ).exchanges.map((x) => [x.name, x]),
);

/** The texts a named exchange's ninja-p2p peer sends, in order. */
export const ninjaTexts = (name) =>
  ninjaExchanges[name].steps.filter((s) => s.do === 'receive').map((s) => s.text);

export const sha256Hex = (b) => createHash('sha256').update(b).digest('hex');

export class NinjaBusPeer {
  constructor(server, id, { room = 'lab' } = {}) {
    this.id = id;
    this.got = []; // every envelope received, parsed
    this.handlers = [];
    this.transport = createRelayTransport({
      url: `${server.url}?writer=${id}&kind=agent`,
      room,
      selfId: id,
      WebSocket,
      reconnectMinMs: 20,
      reconnectMaxMs: 200,
      ...roomSecretOption(),
    });
    this.transport.subscribe({
      text: (peer, text) => {
        const env = JSON.parse(text);
        this.got.push({ peer, env });
        for (const h of this.handlers) h(peer, env);
      },
    });
  }

  /** Calls `fn(peer, env)` for every envelope from now on. */
  on(fn) {
    this.handlers.push(fn);
  }

  envelope(type, to, payload) {
    return JSON.stringify({
      v: 1,
      id: randomBytes(12).toString('base64url'),
      type,
      from: { streamId: this.id, role: 'agent', name: 'Worker', instanceId: '1f2e3d4c' },
      to,
      topic: null,
      ts: Date.now(),
      payload,
    });
  }

  send(to, type, payload) {
    const text = this.envelope(type, to, payload);
    if (!this.transport.send(to, text)) throw new Error(`the relay did not take our ${type}`);
    return JSON.parse(text);
  }

  sendText(to, text) {
    if (!this.transport.send(to, text)) throw new Error('the relay did not take our text');
  }

  /** Waits for a received envelope matching `pred`; returns it. */
  async expect(what, pred) {
    const hit = await waitFor(what, () => this.got.find(({ env }) => pred(env)));
    return hit.env;
  }

  close() {
    return this.transport.close();
  }
}
