// Which WASM module holds which room binding (wasm/module.cmake), and which already-loaded instance
// the lazily started glue finds (web/glue/load.js loadedTetherModule): the peer transports (member,
// signaling) must get a module that holds their binding, never merely the newest one, since a page
// can load the edge module for tickets after the full one. Its own file: registering a module is
// global to the process, and node --test runs each file in one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import factory, { tetherModule } from '../../build/wasm/tether-edge.mjs';
import { loadTetherModule, loadedTetherModule, registerTetherModule } from '../../web/glue/load.js';

test('the edge module hosts rooms and holds no member or signaling core', async () => {
  assert.deepEqual(
    ['room', 'member', 'signaling'].map((b) => tetherModule.bindings.includes(b)),
    [true, false, false],
  );
  assert.equal(loadedTetherModule('member'), null, 'nothing is loaded yet');

  const full = await loadTetherModule({}, 'member'); // nothing registered: the full module
  assert.equal(typeof full.RoomMemberCore, 'function');
  assert.equal(typeof full.SignalingCore, 'function');
  assert.equal(typeof full.RoomRelayCore, 'function');

  registerTetherModule({
    ...tetherModule,
    factory,
    wasmUrl: () => new URL('../../build/wasm/tether-edge.wasm', import.meta.url),
  });
  const edge = await loadTetherModule({}, 'room'); // the registered edge module holds it
  assert.notEqual(edge, full);
  assert.equal(typeof edge.RoomRelayCore, 'function');
  assert.equal(typeof edge.roomVerifyTicket, 'function');
  assert.equal(typeof edge.RoomAdmissionCore, 'function');
  assert.equal(edge.RoomMemberCore, undefined, 'the member binding is not in the edge module');
  assert.equal(edge.SignalingCore, undefined, 'the signaling binding is not in the edge module');

  // The newest instance is the edge one; the peer glue still finds the one that holds its core.
  assert.equal(loadedTetherModule(), edge);
  assert.equal(loadedTetherModule('room'), edge);
  assert.equal(loadedTetherModule('member'), full);
  assert.equal(loadedTetherModule('signaling'), full);
  assert.equal(loadedTetherModule('no-such-binding'), null);
});
