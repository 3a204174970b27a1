// video: jpeg.v1 frames drawn on a canvas with the browser's own decoder, and their fps.
// (video.webrtc.v1 tracks need an SFU, which this relay does not broker yet.)
import { Panel } from './panel.js';

export class VideoPanel extends Panel {
  #canvas = document.createElement('canvas');
  #fps = document.createElement('div');
  #pending = false;

  constructor(ctx) {
    super(ctx);
    this.#canvas.className = 'video-canvas';
    this.#canvas.setAttribute('role', 'img');
    this.#canvas.setAttribute('aria-label', `${this.spec.title} camera`);
    this.#fps.className = 'overlay';
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

  onTick(now) {
    const s = this.stats.get(this.channels[0].ch).snapshot(now);
    this.#fps.textContent = `${s.rateHz.toFixed(1)} fps`;
  }
}
