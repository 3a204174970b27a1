// Which WASM module holds which room binding (wasm/module.cmake), and which already-loaded instance
// the lazily started glue finds (web/glue/load.js loadedTetherModule): the peer transports (member,
// signaling) must get a module that holds their binding, never merely the newest one, since a page
// can load the rooms module for tickets after the full one. Its own file: registering a module is
// global to the process, and node --test runs each file in one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import factory, { tetherModule } from '../../build/wasm/tether-rooms.mjs';
import { loadTetherModule, loadedTetherModule, registerTetherModule } from '../../web/glue/load.js';

test('the rooms Worker module (tether-rooms) hosts rooms and holds no member or signaling core', async () => {
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
    wasmUrl: () => new URL('../../build/wasm/tether-rooms.wasm', import.meta.url),
  });
  const edge = await loadTetherModule({}, 'room'); // the registered rooms module holds it
  assert.notEqual(edge, full);
  assert.equal(typeof edge.RoomRelayCore, 'function');
  assert.equal(typeof edge.roomVerifyTicket, 'function');
  assert.equal(typeof edge.RoomAdmissionCore, 'function');
  assert.equal(edge.RoomMemberCore, undefined, 'the member binding is not in the rooms module');
  assert.equal(edge.SignalingCore, undefined, 'the signaling binding is not in the rooms module');

  // The newest instance is the rooms one; the peer glue still finds the one that holds its core.
  assert.equal(loadedTetherModule(), edge);
  assert.equal(loadedTetherModule('room'), edge);
  assert.equal(loadedTetherModule('member'), full);
  assert.equal(loadedTetherModule('signaling'), full);
  assert.equal(loadedTetherModule('no-such-binding'), null);
});

// One module per edge Worker (web/edge/workers.mjs): each holds its own system's bindings and no
// other system's, so no Worker uploads or cold-starts another's core (bench/README.md § Module size).
test("each edge Worker's module holds its own system's bindings only", async () => {
  const { EDGE_WORKERS } = await import('../../web/edge/workers.mjs');
  const systems = {
    room: 'tether-rooms',
    http: 'tether-rooms',
    cockpit_relay: 'tether-cockpit-relay',
    mailbox: 'tether-mailbox',
    room_client: null, // the room client: peers only, in no edge Worker
  };
  for (const w of EDGE_WORKERS) {
    const { tetherModule: m } = await import(`../../build/wasm/${w.module}.mjs`);
    assert.equal(m.name, w.module);
    for (const [binding, owner] of Object.entries(systems))
      assert.equal(m.bindings.includes(binding), owner === w.module, `${w.module} and ${binding}`);
  }
});

// On the rooms Worker's module (registered above, as the rooms Worker does) the relay side works
// and the client side, which that module leaves out, says where it runs instead of crashing.
test('tether/relay on the rooms module: the relay works, the client names its runtimes', async () => {
  const relay = await import('../../web/glue/relay.js');
  const r = relay.createRelay({ policyVersion: 0 });
  const sent = [];
  const conn = r.connectText(
    { send: (t) => sent.push(JSON.parse(t)), close() {} },
    { writer: 'w' },
  );
  conn.receive(relay.helloText({ room: 'lab', origin: 'o', policyVersion: 0 }));
  assert.equal(sent[0]?.t, 'welcome', 'a relay on tether-rooms welcomes a hello');
  assert.throws(
    () => relay.createRoomClient({ room: 'lab', origin: 'o', writer: 'w' }),
    /RoomClientCore is not in the WASM module this runtime loaded .*tether-rooms.*full module/,
  );
  assert.throws(() => relay.validateEnvelope({}), /roomValidateEnvelope is not in the WASM module/);
});
