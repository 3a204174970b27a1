// The reference Worker for bench/edge.bench.mjs: the same Durable Object (web/edge/room-object.js:
// tickets, limits, journal, checkpoints, hibernation) built around @mmstack/mesh-protocol's
// createRelay instead of tether's WASM relay. Bundled by esbuild (bare specifier) before Miniflare
// loads it. The reference has no JSON-text connection, so this shim parses and stringifies every
// message, as its own adapter recipe does. The endpoint around it (admission limits, the hello and
// replay messages) is tether's core on both sides, so it loads the same WASM module.
import { createRelay as meshCreateRelay, pathPrefixAcl } from '@mmstack/mesh-protocol';
import wasm from '../../build/wasm/tether-rooms.wasm';
import '../../web/glue/modules/tether-rooms.js';
import { moduleInit } from '../../web/edge/init.js';
import { defineRoomObject } from '../../web/edge/room-object.js';
import { handleRequest } from '../../web/edge/router.js';

function createRelay(options) {
  const relay = meshCreateRelay(options);
  return {
    connectText(socket, ctx) {
      const conn = relay.connect(
        { send: (m) => socket.send(JSON.stringify(m)), close: () => socket.close?.() },
        ctx,
      );
      return {
        receive(text) {
          let msg;
          try {
            msg = JSON.parse(text);
          } catch {
            return { reason: 'unparseable', message: 'not JSON' };
          }
          conn.receive(msg);
          return null;
        },
        disconnect: () => conn.disconnect(),
      };
    },
    room: (name) => relay.room(name),
    hydrate: (name, snapshot) => relay.hydrate(name, snapshot),
    unload: (name, options) => relay.unload(name, options),
  };
}

const init = moduleInit(wasm);
export const RoomObject = defineRoomObject({ relayImpl: { createRelay, pathPrefixAcl }, init });
export default {
  async fetch(request, env) {
    await init();
    return handleRequest(request, env);
  },
};
