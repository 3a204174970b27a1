// Cockpit video (issue #18; docs/webrtc-video.md § Speed): glass-to-glass latency of the same robot
// camera (a stamped test pattern, 640x480 at 30 fps by default) through the cockpit two ways, side
// by side: WebRTC (H.264 through the local SFU the Deno relay brokers) and JPEG (mjpeg frames over
// the relay's WebTransport lane), each frame stamped with the wall clock when the robot draws it
// and read back by pixels when a Chromium viewer has decoded it. With 1, 2 and 4 viewers, the
// relay's CPU (and the SFU's, for WebRTC) from /proc, as % of one core and per viewer. JPEG over
// the relay is the reference: the WebRTC figures are also printed as its ratio.
//
// Runs itself inside `unshare -n` (loopback only). The figures need a quiet machine; nothing here
// asserts a speed. Knobs: BENCH_VIDEO_SECONDS (5, per CPU window), BENCH_VIDEO_FRAMES (150 latency
// samples), BENCH_VIDEO_VIEWERS (1,2,4), BENCH_VIDEO_SIZE (640x480), BENCH_VIDEO_FPS (30).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNetns } from './lib/netns.mjs';

await runInNetns(import.meta.url, main);

async function main() {
  const { chromium } = await import('playwright-core');
  const { LAUNCH_WEBRTC } = await import('../tests/e2e/lib/chromium.mjs');
  const { startStaticServer } = await import('../tests/e2e/lib/static_server.mjs');
  const { killAll, startDeno, startRelay } = await import('../tests/e2e/lib/cockpit_procs.mjs');
  const repo = fileURLToPath(new URL('../', import.meta.url));

  const SECONDS = Number(process.env.BENCH_VIDEO_SECONDS ?? 5);
  const FRAMES = Number(process.env.BENCH_VIDEO_FRAMES ?? 150);
  const VIEWERS = (process.env.BENCH_VIDEO_VIEWERS ?? '1,2,4').split(',').map(Number);
  const SIZE = process.env.BENCH_VIDEO_SIZE ?? '640x480';
  const FPS = Number(process.env.BENCH_VIDEO_FPS ?? 30);
  const WARMUP = 30; // frames left out: the first second holds the first keyframe's wait
  const cleanup = [];

  const ticks = (pid) => {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime, USER_HZ = 100
  };
  const cpu = async (pids) => {
    const t0 = pids.map(ticks);
    const w0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const s = (performance.now() - w0) / 1000;
    return pids.map((p, i) => (ticks(p) - t0[i]) / s); // % of one core
  };
  const stat = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
    return { median: q(0.5), p95: q(0.95), min: s[0] };
  };

  try {
    // The SFU runs as its own process, so its CPU is its own.
    const dir = mkdtempSync(join(tmpdir(), 'tether-video-bench-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const rtcFile = join(dir, 'rtc.json');
    const sfu = spawn(
      process.execPath,
      [`${repo}web/sfu/server.js`, '--port', '0', '--rtc-file-out', rtcFile],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    cleanup.push(() => sfu.exitCode === null && sfu.kill('SIGKILL'));
    await new Promise((resolve, reject) => {
      let out = '';
      sfu.stdout.on('data', (d) => (out += d) && /tether sfu ready: /.test(out) && resolve());
      sfu.on('exit', (c) => reject(new Error(`the SFU exited (${c}):\n${out}`)));
    });
    const relay = await startRelay(['--rtc-file', rtcFile]);
    cleanup.push(() => killAll());
    await startDeno(
      'bench/cockpit_video_robot.js',
      [relay.http, SIZE, String(FPS)],
      /bench robot welcomed/,
    );
    const web = await startStaticServer(repo);
    cleanup.push(() => web.close());
    const browser = await chromium.launch({
      ...LAUNCH_WEBRTC,
      args: [...LAUNCH_WEBRTC.args, '--autoplay-policy=no-user-gesture-required'],
    });
    cleanup.push(() => browser.close());

    const openViewer = async (ch) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(
        `${web.origin}/bench/pages/video.html?ch=${ch}&relay=${encodeURIComponent(relay.http)}`,
      );
      await page.waitForFunction(() => window.bench?.seen().valid > 30, null, {
        timeout: 120_000,
        polling: 200,
      });
      return context;
    };
    const rows = [];
    for (const ch of ['jpeg', 'front']) {
      const contexts = [await openViewer(ch)];
      const page = contexts[0].pages()[0];
      await page.waitForFunction(
        (n) => window.bench.seen().latencies.length >= n,
        FRAMES + WARMUP,
        {
          timeout: 120_000,
          polling: 200,
        },
      );
      const lat = stat(
        (await page.evaluate(() => window.bench.seen().latencies)).slice(WARMUP, WARMUP + FRAMES),
      );
      const byViewers = new Map();
      for (const n of VIEWERS) {
        while (contexts.length < n) contexts.push(await openViewer(ch));
        byViewers.set(n, await cpu([relay.pid, sfu.pid]));
      }
      rows.push({ ch, lat, byViewers });
      for (const c of contexts) await c.close();
      await new Promise((r) => setTimeout(r, 1000)); // the relay lets the viewers go
    }

    const name = { jpeg: 'JPEG over WebTransport', front: 'WebRTC through the SFU' };
    console.log(
      `\ncockpit video: ${SIZE} at ${FPS} fps (frame interval ${(1000 / FPS).toFixed(1)} ms), robot -> relay -> Chromium, ${FRAMES} frames; load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
    );
    console.log(
      'path                       median ms   p95 ms   min ms   | viewers  relay CPU %  per viewer   SFU CPU %  per viewer',
    );
    for (const r of rows) {
      const [first, ...rest] = VIEWERS;
      const line = (n, head) => {
        const [relayCpu, sfuCpu] = r.byViewers.get(n);
        const cells = `${String(n).padStart(7)}  ${relayCpu.toFixed(1).padStart(11)}  ${(relayCpu / n).toFixed(2).padStart(10)}  ${(r.ch === 'front' ? sfuCpu.toFixed(1) : '-').padStart(10)}  ${(r.ch === 'front' ? (sfuCpu / n).toFixed(2) : '-').padStart(10)}`;
        console.log(`${head} | ${cells}`);
      };
      line(
        first,
        `${name[r.ch].padEnd(26)} ${String(r.lat.median).padStart(9)}  ${String(r.lat.p95).padStart(7)}  ${String(r.lat.min).padStart(7)}  `,
      );
      for (const n of rest) line(n, ' '.repeat(55));
    }
    const [j, w] = [rows[0].lat, rows[1].lat];
    console.log(
      `WebRTC/JPEG median latency x${(w.median / Math.max(1, j.median)).toFixed(2)}; the relay forwards every JPEG frame to every viewer and no WebRTC media at all (the SFU does)`,
    );
    const relayRatios = VIEWERS.map((n) => {
      const [jr, wr] = [rows[0].byViewers.get(n)[0], rows[1].byViewers.get(n)[0]];
      return `${n}: x${(wr / Math.max(0.1, jr)).toFixed(2)}`;
    });
    console.log(`WebRTC/JPEG relay CPU by viewers ${relayRatios.join(', ')}`);
  } finally {
    for (const fn of cleanup.reverse())
      await Promise.resolve()
        .then(fn)
        .catch(() => {});
  }
}
