// The physical limit for bench/edge.bench.mjs: the least a Durable Object can do and still be a
// room relay under the same workerd, front door and sockets. The Worker checks the same tickets
// (web/edge/router.js) and hands the upgrade to this object, which accepts the socket through the
// same hibernatable API and, for every frame, sends those same bytes to every member of the room
// (the writer's copy is its echo), with no parsing, no admission and no protocol. Durable: before
// any copy goes out, the frame is one INSERT into its SQLite journal and the echo waits for
// ctx.storage.sync(), the same storage work per envelope, and the same promise, as the real
// room's (docs/rooms.md § Durability at the edge). Bundled by esbuild with the other bench Workers.
import wasm from '../../build/wasm/tether-rooms.wasm';
import '../../web/glue/modules/tether-rooms.js';
import { moduleInit } from '../../web/edge/init.js';
import { handleRequest } from '../../web/edge/router.js';

export class RoomObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.durable = env.ROOM_DURABILITY !== 'off';
    // Our own list (getWebSockets() allocates per call); a woken object starts from the runtime's.
    this.members = new Set(ctx.getWebSockets());
    this.seq = 0;
    if (this.durable) {
      ctx.storage.sql.exec(
        'CREATE TABLE IF NOT EXISTS echo_journal (seq INTEGER PRIMARY KEY, frame TEXT NOT NULL)',
      );
      this.seq = Number(
        ctx.storage.sql.exec('SELECT COALESCE(MAX(seq), 0) AS s FROM echo_journal').one().s,
      );
    }
  }

  async fetch(request) {
    if (!request.headers.get('X-Tether-Writer'))
      return new Response('through the Worker only\n', { status: 403 });
    const [client, server] = /** @type {any[]} */ (Object.values(new WebSocketPair()));
    this.ctx.acceptWebSocket(server);
    this.members.add(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  fanOut(message) {
    for (const ws of this.members) {
      try {
        ws.send(message);
      } catch {
        // gone; its close event removes it
      }
    }
  }

  webSocketMessage(ws, message) {
    if (!this.durable) return this.fanOut(message);
    this.seq += 1;
    this.ctx.storage.sql.exec(
      'INSERT INTO echo_journal (seq, frame) VALUES (?, ?)',
      this.seq,
      message,
    );
    // The room's object does not hold its handler open for the sync either.
    void this.ctx.storage.sync().then(() => this.fanOut(message));
  }

  webSocketClose(ws, code) {
    this.members.delete(ws);
    try {
      ws.close(code === 1005 ? 1000 : code, 'bye');
    } catch {
      // already closed
    }
  }

  webSocketError(ws) {
    this.members.delete(ws);
  }
}

const init = moduleInit(wasm);
export default {
  async fetch(request, env) {
    await init(); // the ticket check, as in front of the real room
    return handleRequest(request, env);
  },
};
