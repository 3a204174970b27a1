// Cockpit over real WebTransport on loopback with Chromium as the viewer: the page loads the WASM
// core and the glue from the relay itself (http://127.0.0.1 is a secure context), pins the relay's
// start-up certificate, and watches the demo robot.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { killAll, startRelay, startRobot } from './lib/cockpit_procs.mjs';
import { LAUNCH } from './lib/chromium.mjs';

let relay;
let browser;

before(async () => {
  relay = await startRelay();
  await startRobot(relay.http, ['--camera-hz', '20']);
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close().catch(() => {});
  killAll();
});

test('chromium viewer: the viewer client gets latest camera frames and a reliable chat echo over WebTransport', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  const foreign = [];
  page.on('request', (r) => !r.url().startsWith(relay.http) && foreign.push(r.url()));
  await page.goto(`${relay.http}/api/info`);
  const r = await page.evaluate(async () => {
    // The cockpit's own viewer client (the viewer session core through the driver), in the page.
    const { loadTetherModule } = await import('/web/glue/load.js');
    const { createWire } = await import('/web/glue/wire.js');
    const { relayInfo } = await import('/web/glue/cockpit-transport.js');
    const { connectViewer } = await import('/web/glue/cockpit-viewer.js');
    const mod = await loadTetherModule();
    const wire = createWire(mod);
    const info = await relayInfo();
    const frames = {};
    const messages = [];
    let manifest = null;
    let robots = [];
    const v = connectViewer(mod, wire, info, {
      event(e) {
        if (e.kind === 'message') messages.push(e);
        if (e.kind === 'manifest') manifest = e.manifest;
        if (e.kind === 'robots') robots = e.robots;
      },
      frame: ({ header: h, payload: p }) =>
        (frames[h.ch] ??= []).push({
          seq: h.seq,
          delivery: h.delivery,
          soi: [p[0], p[1]],
          text: h.ch === 'chat' ? new TextDecoder().decode(p) : null,
        }),
    });
    const until = async (fn) => {
      const end = Date.now() + 20000;
      while (Date.now() < end && !fn()) await new Promise((res) => setTimeout(res, 50));
      return fn();
    };
    v.start();
    await until(() => robots.length > 0);
    v.watch('demo-1');
    v.want(['camera', 'chat']);
    await until(() => manifest);
    // Published once the session holds the manifest (the core sends sub for the wanted rx channels).
    const published = v.publish(
      'say',
      new TextEncoder().encode(JSON.stringify({ text: 'from chromium' })),
      'b1',
    );
    const ack = await until(() => messages.find((m) => m.t === 'pub_ack' || m.t === 'pub_nack'));
    await until(() => (frames.camera?.length ?? 0) >= 5 && frames.chat?.length);
    const lane = v.lane;
    v.close();
    return {
      channels: manifest.channels.length,
      published,
      ack,
      camera: frames.camera ?? [],
      chat: frames.chat ?? [],
      url: info.wtUrl,
      lane,
    };
  });
  await page.close();
  assert.deepEqual(problems, []);
  assert.deepEqual(foreign, []);
  assert.match(r.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(r.lane, 'webtransport');
  assert.equal(r.published, 'sent');
  assert.deepEqual(r.ack, { kind: 'message', t: 'pub_ack', ch: 'say', id: 'b1' });
  assert.ok(r.camera.length >= 5, `camera frames: ${r.camera.length}`);
  for (const f of r.camera) {
    assert.deepEqual(f.soi, [0xff, 0xd8]);
    assert.equal(f.delivery, 'latest');
  }
  assert.equal(r.chat.length, 1);
  assert.equal(JSON.parse(r.chat[0].text).text, 'echo: from chromium');
});
