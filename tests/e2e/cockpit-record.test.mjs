// Record and replay in the real cockpit against the demo robot: Record writes the ticked channels
// for 10 s into an MCAP file in OPFS; the downloaded file passes @mcap/core's validating reader
// and holds, per channel, exactly a run of the frames the cockpit saw live, in order and byte for
// byte; opening it replays the same frames through the panels in the same order. A large
// generated recording seeks from its index: the bytes read through the page's counting readable
// stay within the summary and the few chunks a position needs.
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { killAll, startRelay, startRobot } from './lib/cockpit_procs.mjs';
import { LAUNCH, artifacts, openCockpit, poseX, restingPoseX } from './lib/cockpit_page.mjs';
import { indexedReader, validateWhole, writeLargeRecording } from './lib/mcap_files.mjs';

let relay;
let browser;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  relay = await startRelay();
  await startRobot(relay.http, ['--log-hz', '10']);
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close().catch(() => {});
  killAll();
});

// FNV-1a over a payload, in the page and here: frames compared without shipping their bytes.
const fnv = (bytes) => {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
};

/** Starts collecting every frame the cockpit's panels get, live or replayed. */
const tap = (page) =>
  page.evaluate(`(() => {
    const fnv = ${fnv.toString()};
    const ui = window.tetherCockpit.ui;
    window.seen = [];
    ui.taps.add((f) => window.seen.push({ phase: ui.replay ? 'replay' : 'live', ch: f.header.ch, seq: f.header.seq, hash: fnv(f.payload), text: f.header.ch === 'pose' ? new TextDecoder().decode(f.payload) : null }));
  })()`);

const byChannel = (list) => {
  const m = new Map();
  for (const f of list) (m.get(f.ch) ?? m.set(f.ch, []).get(f.ch)).push(f);
  return m;
};

test('record 10 s, then replay: the file validates and holds the live frames, which replay in order', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http);
  await tap(page);
  await page.click('#record');
  await page.waitForFunction(
    () => Number(document.querySelector('#recording').dataset.messages) > 0,
    null,
    { timeout: 20000 },
  );
  const started = Date.now();
  await page.click('.panel-teleop .lease-button');
  await page.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'held',
    null,
    { timeout: 10000 },
  );
  const drive = async () => {
    const x0 = await poseX(page);
    await page.click('.top h1');
    await page.keyboard.down('w');
    await page.waitForFunction(
      (x) => Number(document.querySelector('.panel-map2d').dataset.poseX) > x + 2,
      x0,
      { timeout: 20000 },
    );
    await page.keyboard.press(' ');
    await page.keyboard.up('w');
    return restingPoseX(page);
  };
  // The robot drives and comes to rest while recording...
  const recordedX = await drive();
  await page.waitForTimeout(Math.max(0, 10000 - (Date.now() - started)));
  const download = page.waitForEvent('download');
  await page.click('#record');
  await page.click('#recording-download');
  const path = `${artifacts}recording.mcap`;
  await (await download).saveAs(path);
  const live = (await page.evaluate(() => window.seen)).filter((f) => f.phase === 'live');
  // ...and drives on after the recording stopped, so the live map differs from the recorded one.
  const laterX = await drive();
  assert.notEqual(laterX, recordedX);

  // The whole file passes the validating stream reader (every record, every CRC).
  const records = await validateWhole(path);
  assert.equal(records.at(-1).type, 'Footer');
  // Indexed: every message is reachable through the summary's chunk indexes.
  const { reader, close } = await indexedReader(path);
  const topics = new Map([...reader.channelsById].map(([id, c]) => [id, c]));
  const schemas = Object.fromEntries(
    [...reader.channelsById.values()].map((c) => [
      c.topic,
      [c.messageEncoding, reader.schemasById.get(c.schemaId)?.name],
    ]),
  );
  assert.deepEqual(schemas.camera, ['json', 'foxglove.CompressedImage']);
  assert.deepEqual(schemas.pose, ['json', 'foxglove.PoseInFrame']);
  assert.deepEqual(schemas.stats, ['json', 'stats.json.v1']);
  assert.deepEqual(schemas.log, ['json', 'json.v1']);
  assert.deepEqual(schemas.costmap, ['json', 'foxglove.Grid']);
  assert.deepEqual(schemas.voxels, ['json', 'foxglove.PointCloud']);
  const filed = [];
  for await (const m of reader.readMessages({ validateCrcs: true }))
    filed.push({ ch: topics.get(m.channelId).topic, seq: m.sequence, data: m.data });
  await close();
  assert.equal(BigInt(filed.length), reader.statistics.messageCount);

  // Per channel the file holds a contiguous run of what the cockpit saw live, same order, same bytes.
  const liveBy = byChannel(live);
  const fileBy = byChannel(filed);
  for (const ch of ['camera', 'pose', 'stats', 'log', 'costmap'])
    assert.ok(fileBy.get(ch)?.length, `${ch} recorded`);
  assert.ok(fileBy.get('pose').length >= 20, `pose messages: ${fileBy.get('pose').length}`);
  for (const [ch, got] of fileBy) {
    const seen = liveBy.get(ch);
    const at = seen.findIndex((f) => f.seq === got[0].seq);
    assert.ok(at >= 0, `${ch}: first recorded seq ${got[0].seq} was seen live`);
    got.forEach((m, i) => {
      const l = seen[at + i];
      assert.equal(m.seq, l.seq, `${ch} #${i}`);
      if (ch === 'camera')
        assert.equal(
          fnv(Buffer.from(JSON.parse(Buffer.from(m.data)).data, 'base64')),
          l.hash,
          `${ch} seq ${m.seq} bytes`,
        );
      else if (ch === 'costmap' || ch === 'voxels')
        // Foxglove's fields beside the tether payload our replay feeds back (the Grid's and the
        // PointCloud's own fields are checked against known cells in cockpit-relay-record).
        assert.equal(
          fnv(Buffer.from(JSON.parse(Buffer.from(m.data)).tether_payload, 'base64')),
          l.hash,
          `${ch} seq ${m.seq} bytes`,
        );
      else if (ch === 'pose') {
        const p = JSON.parse(Buffer.from(m.data)).pose;
        const want = JSON.parse(l.text);
        assert.equal(p.position.x, want.x);
        assert.equal(p.position.y, want.y);
        assert.ok(
          Math.abs(2 * Math.atan2(p.orientation.z, p.orientation.w) - want.yaw) < 1e-9 ||
            Math.abs(
              Math.abs(2 * Math.atan2(p.orientation.z, p.orientation.w) - want.yaw) - 2 * Math.PI,
            ) < 1e-9,
        );
      } else if (schemas[ch][0] === 'json')
        assert.equal(fnv(m.data), l.hash, `${ch} seq ${m.seq} bytes`);
    });
  }

  // Replay through the panels, fast: the same frames, in the file's order.
  await page.setInputFiles('#open-mcap', path);
  await page.waitForSelector('#replay-speed');
  await page.selectOption('#replay-speed', '8');
  await page.waitForFunction(
    () => document.querySelector('#timeline').dataset.playing === 'false',
    null,
    { timeout: 60000 },
  );
  const replayed = (await page.evaluate(() => window.seen)).filter((f) => f.phase === 'replay');
  const order = (list) => list.map((f) => `${f.ch}#${f.seq}`);
  assert.deepEqual(order(replayed), order(filed));
  const liveHash = new Map(live.map((f) => [`${f.ch}#${f.seq}`, f.hash]));
  for (const f of replayed)
    if (f.ch !== 'pose')
      assert.equal(f.hash, liveHash.get(`${f.ch}#${f.seq}`), `${f.ch}#${f.seq} replayed bytes`);
  // The map and camera panels drew the replay; the status names no decode error.
  assert.equal(await page.$eval('#status-errors', (e) => e.dataset.decodeErrors), '0');
  assert.equal(await poseX(page), recordedX, 'the replayed map ends where the recording did');
  await page.screenshot({ path: `${artifacts}cockpit-replay.png` });
  // Back to live: the timeline goes and the live map returns.
  await page.getByRole('button', { name: 'Back to live' }).click();
  assert.equal(await page.isHidden('#timeline'), true);
  await page.waitForFunction(
    (x) => Number(document.querySelector('.panel-map2d')?.dataset.poseX) === x,
    laterX,
    { timeout: 20000 },
  );
  assert.deepEqual(problems, []);
  await context.close();
});

test('seeking in a large recording reads its index and the chunks it needs, not the file', async () => {
  const path = `${artifacts}large.mcap`;
  const { hz } = await writeLargeRecording(path);
  const size = statSync(path).size;
  const { reader, close } = await indexedReader(path);
  const chunkBytes = reader.chunkIndexes.map((c) => Number(c.chunkLength + c.messageIndexLength));
  const summaryBytes =
    size - Number(reader.chunkIndexes.at(-1).chunkStartOffset) - chunkBytes.at(-1);
  await close();
  assert.ok(reader.chunkIndexes.length > 100, `chunks: ${reader.chunkIndexes.length}`);

  const { context, page, problems } = await openCockpit(browser, relay.http);
  await page.setInputFiles('#open-mcap', path);
  await page.waitForSelector('#replay-scrub');
  await page.click('#replay-play'); // pause
  await page.waitForFunction(() => document.querySelector('#timeline').dataset.playing === 'false');
  // Seek to the middle by the scrubber, as an operator would.
  const durationMs = Number(await page.$eval('#replay-scrub', (e) => e.max));
  const target = Math.round(durationMs / 2);
  await page.$eval(
    '#replay-scrub',
    (e, v) => {
      e.value = String(v);
      e.dispatchEvent(new Event('input'));
    },
    target,
  );
  // The last message at or before the position: message i is at i / hz seconds.
  const middle = Math.floor((target * hz) / 1000);
  await page.waitForFunction(
    (want) => {
      const t = document.querySelector('.stats-list')?.textContent.replace(/\s/g, '') ?? '';
      return new RegExp(`^i${want}pad`).test(t);
    },
    middle,
    { timeout: 20000 },
  );
  await page.waitForTimeout(300); // the timeline samples bytesRead every 100 ms
  const read = Number(await page.$eval('#timeline', (e) => e.dataset.bytesRead));
  const maxChunk = Math.max(...chunkBytes);
  // The footer and summary, the first chunk (the open), the chunk at the middle, and slack for
  // the chunk a play-on touched before the pause: never the file.
  const bound = summaryBytes + 4 * maxChunk + 4096;
  assert.ok(
    read <= bound,
    `read ${read} bytes of ${size}; bound ${bound} (summary ${summaryBytes}, chunk ≤ ${maxChunk})`,
  );
  assert.ok(read < size / 20, `read ${read} of ${size}`);
  // The plot works in replay as it does live: it follows stats.i from the position on.
  await page.click('#replay-play'); // play on
  await page.getByRole('tab', { name: 'Plot' }).click();
  await page.waitForFunction(
    (m) => {
      const s = JSON.parse(document.querySelector('.panel-plot')?.dataset.series ?? '[]')[0];
      return s?.n >= 3 && s.last > m;
    },
    middle,
    { timeout: 20000 },
  );
  assert.deepEqual(problems, []);
  await context.close();
});

test('a file that is not an indexed MCAP is refused by name and the live cockpit goes on', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http);
  const path = `${artifacts}not-mcap.mcap`;
  const { writeFileSync, readFileSync } = await import('node:fs');
  writeFileSync(path, Buffer.from('\x89MCAP0\r\n this is not a recording'));
  await page.setInputFiles('#open-mcap', path);
  await page.waitForFunction(
    () => /not a readable MCAP file/.test(document.querySelector('#timeline').textContent),
    null,
    { timeout: 20000 },
  );
  assert.match(
    await page.textContent('#timeline'),
    /not-mcap\.mcap is not a readable MCAP file \(.+\); open an indexed \.mcap file/,
  );
  // A recording cut short (its summary and footer gone) is refused the same way.
  const bad = `${artifacts}one-bad.mcap`;
  await writeLargeRecording(bad, { seconds: 2, hz: 10, padBytes: 1, corruptAt: 5 });
  const whole = readFileSync(bad);
  const cut = `${artifacts}cut.mcap`;
  writeFileSync(cut, whole.subarray(0, whole.length >> 1));
  await page.setInputFiles('#open-mcap', cut);
  await page.waitForFunction(
    () =>
      /cut\.mcap is not a readable MCAP file/.test(document.querySelector('#timeline').textContent),
    null,
    { timeout: 20000 },
  );
  // Still live: the panels are the robot's.
  assert.equal(await page.$$eval('.panel', (els) => els.length), 5);
  // A valid file with one unreadable message: it is skipped and counted, the rest replays.
  await page.setInputFiles('#open-mcap', bad);
  await page.waitForFunction(
    () =>
      document.querySelector('#timeline').dataset.playing === 'false' &&
      document.querySelector('#timeline').dataset.positionMs !== '0',
    null,
    { timeout: 20000 },
  );
  assert.equal(await page.textContent('.replay-bad'), '1 unreadable messages skipped');
  assert.match(await page.textContent('.stats-list'), /i\s*19/);
  // The bad stats message went to the panel's decoder, which counted it and kept its last value.
  assert.equal(await page.$eval('#status-errors', (e) => e.dataset.decodeErrors), '1');
  assert.deepEqual(problems, []);
  await context.close();
});
