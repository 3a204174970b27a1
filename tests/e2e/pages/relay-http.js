// A browser member of a sealed room over the HTTP form of the relay transport (docs/agent-bus.md
// § HTTP relay transport): web/peer/relay-transport.js with a room secret and transport 'http',
// on the page's own fetch and WebCrypto, driven from Playwright through window.relayApi.
import { loadTetherModule } from '/web/glue/load.js';

let transport = null;
const opened = [];
const received = []; // [peer, text]
const errors = []; // {code, message}
const log = document.getElementById('log');

window.relayApi = {
  async start({ url, room, id, secret }) {
    document.getElementById('who').textContent = id;
    // The full module, by URL beside the glue: the transport's cores start synchronously on it.
    await loadTetherModule({}, 'sealed');
    const { createRelayTransport } = await import('/web/peer/relay-transport.js');
    transport = createRelayTransport({
      url,
      room,
      selfId: id,
      secret,
      transport: 'http',
      reconnectMinMs: 50,
      reconnectMaxMs: 500,
      onError: (e) => errors.push({ code: e.code ?? null, message: String(e.message) }),
    });
    transport.subscribe({
      open: (p) => opened.push(p),
      text: (p, text) => {
        received.push([p, text]);
        const li = document.createElement('li');
        li.textContent = `${p}: ${text}`;
        log.append(li);
      },
    });
    transport.ready.catch(() => {}); // the test waits on joined() and reads errors()
    return { transport: transport.transport, encrypted: transport.encrypted };
  },
  joined: () => transport.isConnected(),
  send: (peer, text) => transport.send(peer, text),
  opened: () => [...opened],
  received: () => received.map((r) => [...r]),
  errors: () => errors.map((e) => ({ ...e })),
  stats: () => JSON.parse(JSON.stringify(transport.stats)),
  close: () => transport?.close(),
};
window.relayReady = true;
