// Compiled (never run) by tests/node/peer.test.mjs: uses `tether/peer` as a consumer would.
// The @ts-expect-error lines prove the declarations are precise.
import {
  bytesSource,
  createProgressView,
  createSwarmPeer,
  createWebRtcTransport,
  loopbackOnly,
  opfsFolder,
} from '@tether-rt/tether/peer';
import type { PeerTransport, SwarmProgress, WebRtcTransport } from '@tether-rt/tether/peer';
import { fileSource, nodeFolder } from '@tether-rt/tether/peer/node';
import { loadSwarm } from '@tether-rt/tether/swarm';

export async function usePeer(): Promise<void> {
  const t: WebRtcTransport = createWebRtcTransport({
    url: 'ws://127.0.0.1:1/',
    room: 'r',
    selfId: 'me',
    candidateFilter: loopbackOnly,
  });
  await t.ready;
  const asSeam: PeerTransport = t;
  const accepted: boolean = asSeam.send('p', '{}');
  void accepted;
  t.subscribe({
    signalingDown() {},
    open(peer: string) {
      void peer;
    },
  });
  // @ts-expect-error selfId is required
  createWebRtcTransport({ url: 'ws://127.0.0.1:1/', room: 'r' });
  const peer = createSwarmPeer({
    swarm: await loadSwarm(),
    transport: t,
    onProgress: (p: SwarmProgress) => void p.peers,
  });
  const { fileId } = await peer.share({ name: 'a', source: bytesSource(new Uint8Array(4)) });
  const r = await peer.fetch(fileId, await nodeFolder('/tmp/x'), { from: 'seed' });
  const sha: string = r.sha256;
  void sha;
  await peer.share({ name: 'b', source: await fileSource('/tmp/y') });
  // @ts-expect-error a folder is required
  await peer.fetch(fileId);
  const f = await opfsFolder('downloads');
  const bytes: Uint8Array = await f.readAll('a');
  void bytes;
  createProgressView(document.body).update(peer.progress(fileId)!);
}
