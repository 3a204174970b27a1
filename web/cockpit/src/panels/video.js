// video: a camera channel. jpeg.v1 frames are drawn on a canvas with the browser's own decoder;
// a video.webrtc.v1 track plays in a <video> from the session's one peer connection
// (video-rtc.js), in the state the viewer session core reports for it (waiting, connecting, live,
// stalled, failed). The readout shows fps and, for WebRTC, the latency the browser can see.
import { Panel } from './panel.js';

const TRACK_ENCODING = 'video.webrtc.v1';

export class VideoPanel extends Panel {
  #canvas = document.createElement('canvas');
  #fps = document.createElement('div');
  #pending = false;
  #rtc = null; // the WebRTC part, when the channel is a track

  constructor(ctx) {
    super(ctx);
    this.#fps.className = 'overlay';
    const ch = this.channels[0];
    if (ch?.encoding === TRACK_ENCODING) {
      this.#rtc = new TrackView(ctx, ch.ch, this.el, this.#fps);
      this.body.append(this.#rtc.video, this.#fps);
      return;
    }
    this.#canvas.className = 'video-canvas';
    this.#canvas.setAttribute('role', 'img');
    this.#canvas.setAttribute('aria-label', `${this.spec.title} camera`);
    this.body.append(this.#canvas, this.#fps);
  }

  render(ch, dec) {
    if (dec.kind !== 'jpeg' || this.#pending) return; // drop frames while one is decoding: newest wins
    const { bytes, meta } = dec.value;
    this.#pending = true;
    // Copy out of WASM memory before the asynchronous decode.
    createImageBitmap(new Blob([bytes.slice()], { type: 'image/jpeg' }))
      .then((bitmap) => {
        this.#canvas.width = bitmap.width || meta.w;
        this.#canvas.height = bitmap.height || meta.h;
        this.#canvas.getContext('2d').drawImage(bitmap, 0, 0);
        bitmap.close();
      })
      .catch(() => {})
      .finally(() => (this.#pending = false));
  }

  refresh() {
    this.#rtc?.refresh();
  }

  onTick(now) {
    if (this.#rtc) {
      this.#rtc.tick(now);
      return;
    }
    const s = this.stats.get(this.channels[0].ch).snapshot(now);
    this.#fps.textContent = `${s.rateHz.toFixed(1)} fps`;
  }

  destroy() {
    this.#rtc?.destroy();
    super.destroy();
  }
}

// One track channel's <video>: the track on the mid the core names, decoded frames counted with
// requestVideoFrameCallback and reported to the core (which decides live and stalled).
class TrackView {
  video = document.createElement('video');
  #ctx;
  #ch;
  #el;
  #readout;
  #mid = null;
  #frames = 0; // since the last report
  #total = 0;
  #latency = []; // ms, since the last tick
  #latencyMs = null; // their mean at the last tick
  #lastTick = null;
  #fps = 0;
  #estimateMs = null; // from getStats when frames carry no capture time
  #unsubscribe;
  #closed = false;

  constructor(ctx, ch, el, readout) {
    this.#ctx = ctx;
    this.#ch = ch;
    this.#el = el;
    this.#readout = readout;
    Object.assign(this.video, { muted: true, autoplay: true, playsInline: true });
    this.video.className = 'video-canvas';
    this.video.setAttribute('aria-label', `${ctx.panel.title} camera`);
    this.#unsubscribe = ctx.session.rtc.subscribe(() => this.#attach(true));
    this.#frameLoop();
    this.refresh();
  }

  #state() {
    return this.#ctx.session.state.rtc?.tracks?.[this.#ch] ?? null;
  }

  refresh() {
    const t = this.#state();
    const state = this.#ctx.session.state.rtc ? (t?.state ?? 'waiting') : 'unavailable';
    this.#el.dataset.rtcState = state;
    if ((t?.mid ?? null) !== this.#mid) {
      this.#mid = t?.mid ?? null;
      this.#attach(false);
    }
    this.#render();
  }

  // Shows the track on the current mid; `arrived` when the connection just received one.
  #attach(arrived) {
    const track = this.#ctx.session.rtc.track(this.#mid);
    const stream = /** @type {MediaStream | null} */ (this.video.srcObject); // set only below
    const shown = stream?.getVideoTracks()[0] ?? null;
    if (track === shown) return;
    if (!track && arrived) return;
    this.video.srcObject = track ? new MediaStream([track]) : null;
    this.#el.dataset.mid = this.#mid ?? '';
    if (track) this.video.play().catch(() => {});
  }

  #frameLoop() {
    if (this.#closed || typeof this.video.requestVideoFrameCallback !== 'function') return;
    this.video.requestVideoFrameCallback((now, meta) => {
      this.#frames++;
      this.#total++;
      this.#el.dataset.frames = String(this.#total);
      // Glass to glass when the frame carries the sender's capture time (from RTCP sender
      // reports); otherwise getStats gives an estimate at the tick.
      if (meta.captureTime) this.#latency.push(meta.expectedDisplayTime - meta.captureTime);
      this.#frameLoop();
    });
  }

  tick(now) {
    if (this.#lastTick !== null && now > this.#lastTick)
      this.#fps = (this.#frames * 1000) / (now - this.#lastTick);
    this.#lastTick = now;
    if (this.#mid !== null) this.#ctx.session.rtcMedia(this.#ch, this.#frames);
    this.#frames = 0;
    this.#latencyMs = this.#latency.length
      ? this.#latency.reduce((a, b) => a + b, 0) / this.#latency.length
      : null;
    this.#latency = [];
    if (this.#latencyMs === null)
      this.#ctx.session.rtc
        .stats()
        .then((m) => {
          const s = m.get(this.#mid);
          this.#estimateMs =
            s && s.jitterBufferMs != null
              ? s.jitterBufferMs + (s.decodeMs ?? 0) + (s.rttMs ?? 0) / 2
              : null;
        })
        .catch(() => {});
    this.#render();
  }

  #render() {
    const state = this.#el.dataset.rtcState;
    const parts = [state];
    if (state === 'live' || state === 'stalled') {
      parts.push(`${this.#fps.toFixed(1)} fps`);
      if (this.#latencyMs !== null) parts.push(`${this.#latencyMs.toFixed(0)} ms`);
      else if (this.#estimateMs != null) parts.push(`≈${this.#estimateMs.toFixed(0)} ms`);
    }
    this.#readout.textContent = parts.join(' · ');
    this.#el.dataset.fps = this.#fps.toFixed(1);
  }

  destroy() {
    this.#closed = true;
    this.#unsubscribe();
    this.video.srcObject = null;
  }
}
