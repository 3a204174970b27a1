// WebRTC video through the local SFU (docs/webrtc-video.md § Speed): glass-to-glass latency (each
// frame stamped with the wall clock when the robot camera draws it, read back by pixels when
// Chromium presents it decoded) through the SFU, beside the same camera answered by Chromium
// directly (the same run's reference: encode, one WebRTC hop, decode); and the SFU's CPU per
// viewer, from /proc for the SFU's own process, with 0 viewers as the baseline. Printed so the
// cockpit's brokering work can put it beside JPEG over WebTransport at the same size and rate.
//
// Runs itself inside `unshare -n` (loopback only). The figures need a quiet machine; nothing
// here asserts a speed. Knobs: BENCH_SFU_SECONDS (5, per CPU window), BENCH_SFU_FRAMES (150,
// latency samples per path), BENCH_SFU_VIEWERS (1,2,4).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNetns } from './lib/netns.mjs';

await runInNetns(import.meta.url, main);

async function main() {
  const { chromium } = await import('playwright-core');
  const { createCamera } = await import('../web/sfu/camera.js');
  const { createRealtimeClient } = await import('../web/sfu/client.js');
  const { LAUNCH_WEBRTC } = await import('../tests/e2e/lib/chromium.mjs');
  const { startStaticServer } = await import('../tests/e2e/lib/static_server.mjs');
  const repo = fileURLToPath(new URL('../', import.meta.url));

  const SECONDS = Number(process.env.BENCH_SFU_SECONDS ?? 5);
  const FRAMES = Number(process.env.BENCH_SFU_FRAMES ?? 150);
  const VIEWERS = (process.env.BENCH_SFU_VIEWERS ?? '1,2,4').split(',').map(Number);
  const TRACK = { ch: 'front', width: 640, height: 480, fps: 30 };
  const cleanup = [];
  const dir = mkdtempSync(join(tmpdir(), 'tether-sfu-bench-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));

  try {
    // The SFU in a process of its own, so its CPU is its own.
    const rtcPath = join(dir, 'rtc.json');
    const sfu = spawn(
      process.execPath,
      [join(repo, 'web/sfu/server.js'), '--port', '0', '--rtc-file-out', rtcPath],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    cleanup.push(() => sfu.exitCode === null && sfu.kill('SIGKILL'));
    await new Promise((resolve, reject) => {
      let out = '';
      sfu.stdout.on('data', (d) => {
        out += d;
        if (/tether sfu ready: /.test(out)) resolve();
      });
      sfu.on('exit', (c) =>
        reject(new Error(`the SFU exited (${c}) before it was ready:\n${out}`)),
      );
    });
    const client = createRealtimeClient(JSON.parse(readFileSync(rtcPath, 'utf8')));
    const ok = (r, what) => {
      if (!r.ok) throw new Error(`${what}: ${JSON.stringify(r)}`);
      return r.body;
    };

    const web = await startStaticServer(repo);
    cleanup.push(() => web.close());
    const browser = await chromium.launch(LAUNCH_WEBRTC);
    cleanup.push(() => browser.close());
    const openPage = async () => {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${web.origin}/tests/e2e/pages/sfu-viewer.html`);
      await page.waitForFunction(() => window.viewer);
      return page;
    };
    const WARMUP = 30; // frames left out: the first second holds the first keyframe's wait
    const latencies = async (page, mid) => {
      await page.waitForFunction(
        ([m, n]) => (window.viewer.seen(m)?.latencies.length ?? 0) >= n,
        [mid, FRAMES + WARMUP],
        { timeout: 120_000, polling: 100 },
      );
      return (await page.evaluate((m) => window.viewer.seen(m).latencies, mid)).slice(
        WARMUP,
        WARMUP + FRAMES,
      );
    };

    // Reference: the camera answered by Chromium directly.
    const direct = await createCamera({ tracks: [TRACK] });
    cleanup.push(() => direct.close());
    const directPage = await openPage();
    const offer = await direct.offer();
    await direct.applyAnswer(
      await directPage.evaluate((sdp) => window.viewer.answer(sdp), offer.sdp),
    );
    const directLat = await latencies(directPage, offer.tracks[0].mid);
    await direct.close();
    await directPage.close();

    // Through the SFU.
    const camera = await createCamera({ tracks: [TRACK] });
    cleanup.push(() => camera.close());
    const robot = ok(await client.newSession(), 'robot session');
    const o = await camera.offer();
    const pub = ok(
      await client.newTracks(robot.sessionId, {
        sessionDescription: { type: 'offer', sdp: o.sdp },
        tracks: [{ location: 'local', mid: o.tracks[0].mid, trackName: TRACK.ch }],
      }),
      'publish',
    );
    await camera.applyAnswer(pub.sessionDescription.sdp);
    const viewers = [];
    const addViewer = async () => {
      const page = await openPage();
      const v = ok(
        await client.newSession({
          sessionDescription: {
            type: 'offer',
            sdp: await page.evaluate(() => window.viewer.offer()),
          },
        }),
        'viewer session',
      );
      await page.evaluate((sdp) => window.viewer.applyAnswer(sdp), v.sessionDescription.sdp);
      const pulled = ok(
        await client.newTracks(v.sessionId, {
          tracks: [{ location: 'remote', sessionId: robot.sessionId, trackName: TRACK.ch }],
        }),
        'pull',
      );
      const answer = await page.evaluate(
        (sdp) => window.viewer.answer(sdp),
        pulled.sessionDescription.sdp,
      );
      ok(await client.renegotiate(v.sessionId, { type: 'answer', sdp: answer }), 'renegotiate');
      const mid = pulled.tracks[0].mid;
      await page.waitForFunction((m) => (window.viewer.seen(m)?.valid ?? 0) > 10, mid, {
        timeout: 60_000,
      });
      viewers.push({ page, mid });
    };

    const cpu = async () => {
      const ticks = () => {
        const f = readFileSync(`/proc/${sfu.pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return Number(f[11]) + Number(f[12]); // utime + stime, USER_HZ = 100
      };
      const t0 = ticks();
      const w0 = performance.now();
      await new Promise((r) => setTimeout(r, SECONDS * 1000));
      return (100 * (ticks() - t0)) / 100 / ((performance.now() - w0) / 1000);
    };

    const cpuBy = new Map([[0, await cpu()]]); // publishing, nobody pulling
    await addViewer();
    const sfuLat = await latencies(viewers[0].page, viewers[0].mid);
    for (const n of VIEWERS) {
      while (viewers.length < n) await addViewer();
      cpuBy.set(n, await cpu());
    }

    const stat = (xs) => {
      const s = [...xs].sort((a, b) => a - b);
      const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
      return { median: q(0.5), p95: q(0.95), min: s[0] };
    };
    const d = stat(directLat);
    const v = stat(sfuLat);
    console.log(
      `SFU path, ${TRACK.width}x${TRACK.height} H.264 at ${TRACK.fps} fps (frame interval ${(1000 / TRACK.fps).toFixed(1)} ms), ${FRAMES} frames per path; load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
    );
    console.log('path                        median ms   p95 ms   min ms');
    console.log(
      `camera -> Chromium          ${String(d.median).padStart(9)}  ${String(d.p95).padStart(7)}  ${String(d.min).padStart(7)}`,
    );
    console.log(
      `camera -> SFU -> Chromium   ${String(v.median).padStart(9)}  ${String(v.p95).padStart(7)}  ${String(v.min).padStart(7)}`,
    );
    console.log(
      `the SFU adds ${v.median - d.median} ms at the median (x${(v.median / Math.max(1, d.median)).toFixed(2)} of the direct path)`,
    );
    console.log(
      `SFU CPU over ${SECONDS} s windows (% of one core): publishing only ${cpuBy.get(0).toFixed(1)}%`,
    );
    for (const n of VIEWERS) {
      const c = cpuBy.get(n);
      console.log(
        `  ${n} viewer${n > 1 ? 's' : ' '}: ${c.toFixed(1)}%  -> ${((c - cpuBy.get(0)) / n).toFixed(2)}% per viewer`,
      );
    }
  } finally {
    for (const fn of cleanup.reverse())
      await Promise.resolve()
        .then(fn)
        .catch(() => {});
  }
}
