// workerd: a Worker that imports `@tether-rt/tether/relay` from the installed package (bundled by
// esbuild as wrangler would, the .wasm imported precompiled). One Durable Object holds the room
// relay, since workerd lets only the object that owns a WebSocket write to it; the Worker routes
// GET /rooms/<name>?writer=<w> (a WebSocket upgrade) and GET /info?room=<name> to it.
import wasmModule from '@tether-rt/tether/tether.wasm';
import { createRelay, initRelay } from '@tether-rt/tether/relay';

export class Room {
  constructor(ctx) {
    this.ready = ctx.blockConcurrencyWhile(async () => {
      await initRelay({ wasmModule });
      this.relay = createRelay({ policyVersion: 0 });
    });
  }

  async fetch(request) {
    await this.ready;
    const url = new URL(request.url);
    if (request.headers.get('upgrade') !== 'websocket') {
      const room = this.relay.room(url.searchParams.get('room') ?? '');
      return Response.json({ seq: room?.seq ?? null, members: room?.members ?? 0 });
    }
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    const conn = this.relay.connectText(
      { send: (text) => server.send(text), close: () => server.close(1008, 'ejected') },
      { writer: url.searchParams.get('writer') ?? 'anonymous' },
    );
    server.addEventListener('message', (e) => {
      const err = conn.receive(String(e.data));
      if (err) server.close(1007, err.reason);
    });
    server.addEventListener('close', () => conn.disconnect());
    return new Response(null, { status: 101, webSocket: client });
  }
}

export default {
  fetch: (request, env) => env.ROOMS.get(env.ROOMS.idFromName('lab')).fetch(request),
};
