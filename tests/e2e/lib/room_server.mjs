// A loopback room relay for peer tests: Node `ws` carrying the real `tether/relay` core
// (connectText, JSON text in and out). Peers use it for discovery (`members`) and WebRTC
// signaling (`signal`), room-relay.md § WebRTC signaling. It binds 127.0.0.1 only.
//
// Identity stands in for auth: `?writer=` names the principal, `?kind=` human|agent. The
// production adapters (web/edge, web/host) derive the writer from a signed ticket instead.
import { WebSocketServer } from 'ws';
import { createRelay, initRelay } from '@tether-rt/tether/relay';

// `forward(text, send, ctx)`, when given, sees every text the relay sends a client before it
// goes out and decides what goes (tests that watch or tamper with the relay's own view).
export async function startRoomServer({ policyVersion = 1, relayOptions = {}, forward } = {}) {
  await initRelay();
  const relay = createRelay({ policyVersion, ...relayOptions });
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 1 << 20 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const sockets = new Set();
  wss.on('connection', (ws, req) => {
    const params = new URL(req.url, 'http://127.0.0.1').searchParams;
    const ctx = {
      writer: params.get('writer') ?? 'anonymous',
      kind: params.get('kind') ?? 'human',
    };
    sockets.add(ws);
    const send = (text) => ws.send(text);
    const conn = relay.connectText(
      {
        send: forward ? (text) => forward(String(text), send, ctx) : send,
        close: () => ws.close(),
      },
      ctx,
    );
    ws.on('message', (data) => conn.receive(String(data)));
    ws.on('close', () => {
      sockets.delete(ws);
      conn.disconnect();
    });
  });
  const port = wss.address().port;
  return {
    relay,
    port,
    url: `ws://127.0.0.1:${port}/`,
    /** Drops every client socket (a signaling outage); the server keeps listening. */
    dropAll() {
      for (const ws of sockets) ws.terminate();
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}
