// A cockpit viewer for bench/cockpit-video.bench.mjs: the viewer client (web/glue/cockpit-viewer.js)
// over WebTransport to the relay, wanting one channel, `front` (WebRTC through the SFU, played from
// the cockpit's own peer connection holder, web/cockpit/src/panels/video-rtc.js) or `jpeg` (frames
// over the relay, decoded with createImageBitmap). Each decoded frame's test pattern is read back by
// pixels; its stamp gives the latency (robot and browser share the machine's clock).
import { loadTetherModule } from '/web/glue/load.js';
import { createWire } from '/web/glue/wire.js';
import { connectViewer } from '/web/glue/cockpit-viewer.js';
import { RtcVideo } from '/web/cockpit/src/panels/video-rtc.js';
import { readPattern, stampAge } from '/web/sfu/pattern.js';

const params = new URLSearchParams(location.search);
const ch = params.get('ch');
const relay = params.get('relay');
const MAX = 5000;
const seen = { frames: 0, valid: 0, latencies: [] };
window.bench = { seen: () => seen };

const canvas = document.createElement('canvas');
const g = canvas.getContext('2d', { willReadFrequently: true });
function read(source, w, h, at) {
  if (canvas.width !== w || canvas.height !== h) Object.assign(canvas, { width: w, height: h });
  g.drawImage(source, 0, 0, w, h);
  let p = null;
  try {
    p = readPattern(g.getImageData(0, 0, w, h).data, w, h);
  } catch {}
  seen.frames++;
  if (!p?.valid) return;
  seen.valid++;
  if (seen.latencies.length < MAX) seen.latencies.push(stampAge(p.stamp, at));
}

const mod = await loadTetherModule();
const wire = createWire(mod);
const info = await (await fetch(`${relay}/api/info`)).json();
const rtc = new RtcVideo();
let decoding = false;
let lastMid = null;
const viewer = connectViewer(mod, wire, info, {
  webrtc: rtc,
  event(e) {
    if (e.kind === 'robots' && e.robots.length) viewer.watch(e.robots[0].id);
    if (e.kind === 'manifest' && e.manifest) viewer.want([ch]);
    const mid = e.kind === 'state' ? e.rtc?.tracks?.[ch]?.mid : undefined;
    if (mid !== undefined) play((lastMid = mid));
  },
  frame(f) {
    if (f.header.ch !== 'jpeg' || decoding) return; // newest wins while one decodes
    decoding = true;
    createImageBitmap(new Blob([f.payload.slice()], { type: 'image/jpeg' }))
      .then((bitmap) => {
        read(bitmap, bitmap.width, bitmap.height, performance.timeOrigin + performance.now());
        bitmap.close();
      })
      .catch(() => {})
      .finally(() => (decoding = false));
  },
});
rtc.onState = (s) => viewer.rtcState(s);
viewer.start();

const video = document.createElement('video');
Object.assign(video, { muted: true, autoplay: true, playsInline: true });
document.querySelector('#videos').append(video);
let shown = null;
function play(mid) {
  const track = rtc.track(mid);
  if (!track || track === shown) return;
  shown = track;
  video.srcObject = new MediaStream([track]);
  video.play().catch(() => {});
}
rtc.subscribe(() => play(lastMid)); // the track arrives while the relay's offer is applied
let frames = 0;
const onFrame = (now, meta) => {
  frames++;
  if (video.videoWidth)
    read(
      video,
      video.videoWidth,
      video.videoHeight,
      performance.timeOrigin + meta.presentationTime,
    );
  video.requestVideoFrameCallback(onFrame);
};
video.requestVideoFrameCallback(onFrame);
setInterval(() => {
  viewer.rtcMedia(ch, frames);
  frames = 0;
}, 500);
