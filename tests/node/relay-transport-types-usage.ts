// Compiled (never run) by tests/node/agent-relay-transport.test.mjs: the relay transport is a
// PeerTransport, and its options are precise.
import { createRelayTransport } from '../../web/peer/relay-transport.js';
import type { RelayTransport } from '../../web/peer/relay-transport.js';
import type { PeerTransport } from '../../web/peer/transport.js';

export async function use(): Promise<void> {
  const t: RelayTransport = createRelayTransport({
    url: 'ws://127.0.0.1:1/',
    room: 'lab',
    selfId: 'a',
    writer: 'w-a',
    reconnectMinMs: 10,
  });
  const p: PeerTransport = t;
  await t.ready;
  const ok: boolean = p.send('b', '{}');
  void ok;
  const off = p.subscribe({
    text(peer, text) {
      void peer.length;
      void text.length;
    },
    reconnect() {},
  });
  off();
  const n: number = t.stats.reconnects;
  void n;
  // onFailure: narrowing on `stage` reaches each answer's own fields.
  createRelayTransport({
    url: 'ws://x/',
    room: 'r',
    selfId: 'a',
    onFailure(f) {
      const n: number = f.attempt;
      if (f.stage === 'upgrade') void (f.status + f.body.length);
      else if (f.stage === 'connect') void (f.code ?? f.message);
      else if (f.stage === 'closed') void (f.code + f.reason.length);
      else void f.reason.length;
      // @ts-expect-error only an upgrade has a status
      if (f.stage === 'connect') void f.status;
      void n;
    },
  });
  // @ts-expect-error selfId is required
  createRelayTransport({ url: 'ws://x/', room: 'r' });
  // @ts-expect-error numbers only
  createRelayTransport({ url: 'ws://x/', room: 'r', selfId: 'a', maxFrameBytes: '1' });
  await t.close();
}
