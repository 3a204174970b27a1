// A slow viewer over real WebTransport (cockpit-wire-protocol.md § Delivery modes): a viewer that
// stops reading overflows its reliable queue and is disconnected, while another viewer of the same
// robot keeps receiving everything.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { killAll, runClient, startRelay, startRobot } from './lib/cockpit_procs.mjs';

let relay;

before(async () => {
  relay = await startRelay();
  // A heavy reliable log: 64 KiB at 50 Hz fills QUIC's windows within seconds.
  await startRobot(relay.http, ['--log-hz', '50', '--log-bytes', '65536']);
});

after(() => killAll());

test('cockpit: reliable overflow disconnects the slow viewer; the other is unaffected', async () => {
  const r = await runClient('tests/e2e/deno/cockpit_viewer.js', [relay.http, 'slow']);
  assert.equal(r.ok, true, r.error);
  assert.equal(r.slowClosed, true, 'the slow viewer was disconnected');
  assert.equal(r.fastKeptReceiving, true);
  assert.equal(r.fastComplete, true, 'the other viewer lost nothing');
  assert.match(r.closeReason, /reliable queue overflow/);
});
