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

test('chromium viewer: latest camera frames and a reliable chat echo arrive over WebTransport', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  const foreign = [];
  page.on('request', (r) => !r.url().startsWith(relay.http) && foreign.push(r.url()));
  await page.goto(`${relay.http}/api/info`);
  const r = await page.evaluate(async () => {
    const { loadWire } = await import('/web/glue/wire.js');
    const { relayInfo, openWebTransport, ViewerLink } = await import('/web/glue/cockpit-transport.js');
    const wire = await loadWire();
    const info = await relayInfo();
    const frames = {};
    const v = new ViewerLink(wire, await openWebTransport(info, '/viewer'), {
      onFrame: (h, p) => (frames[h.ch] ??= []).push({ seq: h.seq, delivery: h.delivery, soi: [p[0], p[1]], text: h.ch === 'chat' ? new TextDecoder().decode(p) : null }),
    });
    await v.send({ t: 'hello', v: 7, role: 'viewer' });
    await v.waitFor((m) => m.t === 'welcome');
    await v.waitFor((m) => m.t === 'robots' && m.robots.length > 0);
    await v.send({ t: 'watch', robotId: 'demo-1' });
    const manifest = await v.waitFor((m) => m.t === 'manifest' && m.manifest);
    await v.send({ t: 'sub', ch: 'camera' });
    await v.send({ t: 'sub', ch: 'chat' });
    await v.publish('say', 'b1', new TextEncoder().encode(JSON.stringify({ text: 'from chromium' })));
    const ack = await v.waitFor((m) => m.t === 'pub_ack' || m.t === 'pub_nack');
    const end = Date.now() + 20000;
    while (Date.now() < end && !((frames.camera?.length ?? 0) >= 5 && frames.chat?.length)) {
      await new Promise((res) => setTimeout(res, 50));
    }
    v.close();
    return { channels: manifest.manifest.channels.length, ack, camera: frames.camera ?? [], chat: frames.chat ?? [], url: info.wtUrl };
  });
  await page.close();
  assert.deepEqual(problems, []);
  assert.deepEqual(foreign, []);
  assert.match(r.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(r.ack, { t: 'pub_ack', ch: 'say', id: 'b1' });
  assert.ok(r.camera.length >= 5, `camera frames: ${r.camera.length}`);
  for (const f of r.camera) {
    assert.deepEqual(f.soi, [0xff, 0xd8]);
    assert.equal(f.delivery, 'latest');
  }
  assert.equal(r.chat.length, 1);
  assert.equal(JSON.parse(r.chat[0].text).text, 'echo: from chromium');
});
