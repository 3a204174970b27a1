// A browser bus peer for tests: tether/bus over the real WebRTC transport (control lane), driven
// from Playwright through window.peerApi (agent-bus-and-swarm.md § Delivery semantics).
//
// `holdSends(true)` makes the transport refuse sends exactly as a full or not-yet-open lane does
// (send returns false and the caller keeps the message): the bus must queue, not lose, them.
import { loadBus } from '/web/glue/bus.js';
import { createWebRtcTransport, loopbackOnly } from '/web/peer/webrtc-transport.js';

let transport = null;
let bus = null;
let holding = false;
const received = []; // {id, type, from, to, text, replayed}
const rejected = []; // {peer, code, field}
const log = document.getElementById('log');

/** The real transport, with the one switch the test needs; everything else passes through. */
function holdable(t) {
  return { ...t, selfId: t.selfId, send: (peer, text) => (holding ? false : t.send(peer, text)) };
}

function show(env, replayed) {
  const li = document.createElement('li');
  li.dataset.replayed = String(replayed);
  li.textContent = `${env.from.streamId} → ${env.to ?? 'all'}: ${env.payload?.text ?? env.type}`;
  log.append(li);
}

window.peerApi = {
  async start({ url, room, id }) {
    document.getElementById('who').textContent = id;
    const api = await loadBus();
    transport = createWebRtcTransport({ url, room, selfId: id, candidateFilter: loopbackOnly });
    bus = api.createBus({
      self: {
        streamId: id,
        role: 'human',
        name: `page ${id}`,
        instanceId: `${id}.${crypto.randomUUID().slice(0, 8)}`,
      },
      transport: holdable(transport),
      // Peer ids are relay origins: the bus refuses an envelope whose from.streamId is not the
      // peer whose channel carried it.
      peerIdsAreStreams: true,
      message(env, info) {
        if (env.type !== 'chat') return;
        received.push({
          id: env.id,
          type: env.type,
          from: env.from.streamId,
          to: env.to,
          text: env.payload?.text,
          replayed: info.replayed,
        });
        show(env, info.replayed);
      },
      rejected(err, peer) {
        rejected.push({ peer, code: err.code, field: err.field });
      },
    });
    await transport.ready;
    return true;
  },
  openPeers: () => transport.openPeers().sort(),
  send: (to, text) => bus.send(to, 'chat', { text }),
  broadcast(text) {
    const r = bus.broadcast('chat', { text });
    return r.ok
      ? { ok: true, id: r.id, sentTo: [...r.sentTo].sort(), rejectedBy: r.rejectedBy }
      : r;
  },
  requestHistory: (to, count) => bus.requestHistory(to, count),
  holdSends(on) {
    holding = !!on;
    return true;
  },
  queued: (peer) => bus.queued(peer),
  received: () => received.slice(),
  rejected: () => rejected.slice(),
  /** Hostile input from this page: raw text on the control lane, bypassing our own bus. */
  sendRaw: (to, text) => transport.send(to, text),
  /** The DOM list as the page shows it. */
  shown: () => [...log.children].map((li) => li.textContent),
  async close() {
    bus.close();
    await transport.close();
  },
};
window.peerApiReady = true;
