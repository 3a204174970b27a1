// The JPEG reference for bench/cockpit-video.bench.mjs: the robot camera's stamped test pattern
// (web/sfu/pattern.js) at the same size and rate as the WebRTC camera, encoded to JPEG by Debian's
// ffmpeg (mjpeg, as a robot's hardware encoder would hand them over), one callback per frame. Runs
// in Node and Deno; ffmpeg is stopped by PID on close().
import { spawn } from 'node:child_process';
import { createDrawer, patternLayout } from '../../web/sfu/pattern.js';

const SOI = [0xff, 0xd8];
const EOI = [0xff, 0xd9]; // 0xFF in entropy-coded data is stuffed (FF00): FFD9 only ends a picture

export function createJpegCamera({ width = 640, height = 480, fps = 30, quality = 5, onFrame }) {
  const layout = patternLayout(width, height);
  const draw = createDrawer(layout);
  const ff = spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'yuv420p',
      '-s',
      `${width}x${height}`,
      '-framerate',
      String(fps),
      '-i',
      'pipe:0',
      '-an',
      '-c:v',
      'mjpeg',
      '-q:v',
      String(quality),
      '-pix_fmt',
      'yuvj420p',
      '-f',
      'image2pipe',
      'pipe:1',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  ff.stdin.on('error', () => {});
  let pending = new Uint8Array(0);
  ff.stdout.on('data', (chunk) => {
    const all = new Uint8Array(pending.length + chunk.length);
    all.set(pending);
    all.set(chunk, pending.length);
    let start = 0;
    for (let i = 1; i < all.length; i++) {
      if (
        all[i - 1] === EOI[0] &&
        all[i] === EOI[1] &&
        all[start] === SOI[0] &&
        all[start + 1] === SOI[1]
      ) {
        onFrame(all.slice(start, i + 1));
        start = i + 1;
      }
    }
    pending = all.slice(start);
  });
  let counter = 0;
  let n = 0;
  const t0 = Date.now();
  let timer = null;
  const tick = () => {
    // A frame the encoder cannot take now is skipped, as a camera drops it.
    if (ff.stdin.writableLength < 2 * width * height) ff.stdin.write(draw(counter, Date.now()));
    counter = (counter + 1) & 0xffff;
    timer = setTimeout(tick, Math.max(0, t0 + ++n * (1000 / fps) - Date.now()));
  };
  tick();
  return {
    close() {
      clearTimeout(timer);
      ff.stdin.destroy();
      if (ff.exitCode === null) ff.kill('SIGKILL');
    },
  };
}
