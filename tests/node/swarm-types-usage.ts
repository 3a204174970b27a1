// Compiled (never run) by tests/node/swarm.test.mjs: uses `tether/swarm` as a consumer would.
// The @ts-expect-error lines prove the declarations are precise.
import { loadSwarm } from '@tether-rt/tether/swarm';
import type { Swarm, SwarmAction, SwarmSession } from '@tether-rt/tether/swarm';

export async function useSwarm(): Promise<void> {
  const swarm: Swarm = await loadSwarm();
  const offer = swarm.makeOffer({ fileId: 'a'.repeat(64), name: 'f', mimeType: 'x/y', size: 1, hashes: ['b'.repeat(64)] });
  if (!offer.ok) {
    const code: string = offer.code;
    void code;
    return;
  }
  const opened = swarm.fetch(offer.payload, 1, { seed: 1 }, 0);
  if (!opened.ok) return;
  const s: SwarmSession = opened.session;
  s.handlePeerOpen(1, { binaryLane: true, maxMessageSize: 262144 }, 0);
  for (let a: SwarmAction | null; (a = s.pollAction()); ) {
    if (a.kind === 'request') s.handleSendResult(a.token, true, 0);
    if (a.kind === 'serve') {
      const n: number = a.length;
      void n;
    }
    // @ts-expect-error kinds are a closed set
    if (a.kind === 'bogus') return;
  }
  const outcome: 'stored' | 'duplicate' | 'bad_hash' | 'unexpected' = s.handleChunk(1, 0, new Uint8Array(1), 0);
  void outcome;
  // @ts-expect-error peers are numbers
  s.handlePeerClosed('one', 0);
  const wake: number | null = s.pollTimeout();
  void wake;
  s.dispose();
}
