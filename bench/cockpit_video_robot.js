// The robot of bench/cockpit-video.bench.mjs (Deno): one robot session through the relay with the
// same stamped test pattern twice, at the same size and rate: `front`, a video.webrtc.v1 track
// (web/sfu/camera.js, H.264 through the SFU the relay brokers), and `jpeg`, jpeg.v1 frames over
// the relay's WebTransport lane (bench/lib/jpeg_camera.js). The robot SDK sends JPEG frames only
// while some viewer wants them. Usage: cockpit_video_robot.js <relay-http> <WxH> <fps>
import { connectRobot } from '../web/glue/cockpit-robot.js';
import { createCamera } from '../web/sfu/camera.js';
import { createJpegCamera } from './lib/jpeg_camera.js';

globalThis.addEventListener('unhandledrejection', (e) => e.preventDefault());
const [relay, size, fpsArg] = Deno.args;
const [width, height] = size.split('x').map(Number);
const fps = Number(fpsArg);
const manifest = {
  version: 1,
  channels: [
    { ch: 'front', encoding: 'video.webrtc.v1' },
    { ch: 'jpeg', encoding: 'jpeg.v1', delivery: 'latest' },
  ],
};
let robot = null;
const camera = await createCamera({
  tracks: [{ ch: 'front', width, height, fps }],
  onEvent: (e) => e.type === 'connection' && robot?.rtcState(e.state),
});
robot = await connectRobot(
  { relay, id: 'bench-video', name: 'bench', model: 'bench', manifest, webrtc: camera },
  {
    event(e) {
      if (e.kind === 'link' && e.state === 'welcomed') console.log('bench robot welcomed');
      if (e.kind === 'rtc') console.log(`bench robot WebRTC ${e.pc}`);
      if (e.kind === 'error') console.error(`bench robot: ${e.code}: ${e.message}`);
    },
  },
);
const jpeg = createJpegCamera({
  width,
  height,
  fps,
  onFrame: (bytes) => robot.send('jpeg', bytes, { meta: { w: width, h: height } }),
});
for (const sig of ['SIGINT', 'SIGTERM'])
  Deno.addSignalListener(sig, () => {
    jpeg.close();
    camera.close().finally(() => Deno.exit(0));
  });
