// map2d: the costmap as an image with the robot's pose arrow, with pan (drag, arrow keys) and
// zoom (wheel, +/-). World to pixel follows the map's res and origin; the decoder already laid
// the image out north-up (row 0 = world max-y).
import { Panel } from './panel.js';

export class Map2dPanel extends Panel {
  #canvas = document.createElement('canvas');
  #image = document.createElement('canvas');
  #map = null; // {w, h, res, origin}
  #pose = null;
  #zoom = 1;
  #pan = [0, 0];

  constructor(ctx) {
    super(ctx);
    this.#canvas.className = 'map-canvas';
    this.#canvas.tabIndex = 0;
    this.#canvas.setAttribute('role', 'img');
    this.#canvas.setAttribute(
      'aria-label',
      `${this.spec.title}: drag or arrow keys to pan, wheel or +/- to zoom`,
    );
    this.body.append(this.#canvas);
    this.#bindControls();
    new ResizeObserver(() => this.#draw()).observe(this.body);
  }

  render(ch, dec) {
    if (dec.kind === 'costmap') {
      const { meta, rgba } = dec.value;
      this.#image.width = meta.w;
      this.#image.height = meta.h;
      this.#image
        .getContext('2d')
        .putImageData(new ImageData(new Uint8ClampedArray(rgba), meta.w, meta.h), 0, 0);
      this.#map = meta;
      this.el.dataset.mapW = String(meta.w);
      this.el.dataset.mapH = String(meta.h);
    } else if (dec.kind === 'pose') {
      this.#pose = dec.value;
    }
    this.#draw();
  }

  /** Map pixel (image coordinates) of a world point, or null before the first map. */
  worldToImage(x, y) {
    const m = this.#map;
    if (!m) return null;
    const [ox, oy, yaw] = m.origin;
    // Undo the map origin's yaw, then scale by res; image row 0 is the map's top (max y).
    const dx = x - ox;
    const dy = y - oy;
    const c = Math.cos(-yaw);
    const s = Math.sin(-yaw);
    const mx = (dx * c - dy * s) / m.res;
    const my = (dx * s + dy * c) / m.res;
    return [mx, m.h - my];
  }

  #fitScale() {
    const m = this.#map;
    if (!m) return 1;
    return Math.min(this.#canvas.width / m.w, this.#canvas.height / m.h);
  }

  #draw() {
    const { clientWidth: w, clientHeight: h } = this.body;
    if (this.#canvas.width !== w || this.#canvas.height !== h) {
      this.#canvas.width = Math.max(1, w);
      this.#canvas.height = Math.max(1, h);
    }
    const g = this.#canvas.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.fillStyle = '#1b1f27';
    g.fillRect(0, 0, this.#canvas.width, this.#canvas.height);
    if (!this.#map) return;
    const scale = this.#fitScale() * this.#zoom;
    const cx = (this.#canvas.width - this.#map.w * scale) / 2 + this.#pan[0];
    const cy = (this.#canvas.height - this.#map.h * scale) / 2 + this.#pan[1];
    g.imageSmoothingEnabled = false;
    g.setTransform(scale, 0, 0, scale, cx, cy);
    // Exposed for tests and tools that need to find a cell on screen.
    this.#canvas.dataset.transform = JSON.stringify([scale, cx, cy]);
    g.drawImage(this.#image, 0, 0);
    if (this.#pose) {
      const p = this.worldToImage(this.#pose.x, this.#pose.y);
      const heading = this.#pose.yaw - this.#map.origin[2];
      g.setTransform(1, 0, 0, 1, cx + p[0] * scale, cy + p[1] * scale);
      g.rotate(-heading);
      g.fillStyle = '#35c2ff';
      g.strokeStyle = '#0b1020';
      g.lineWidth = 2;
      g.beginPath();
      g.moveTo(14, 0);
      g.lineTo(-8, 8);
      g.lineTo(-4, 0);
      g.lineTo(-8, -8);
      g.closePath();
      g.fill();
      g.stroke();
      this.el.dataset.poseX = p[0].toFixed(2);
      this.el.dataset.poseY = p[1].toFixed(2);
    }
  }

  #bindControls() {
    let drag = null;
    this.#canvas.addEventListener('pointerdown', (e) => (drag = [e.clientX, e.clientY]));
    window.addEventListener('pointerup', () => (drag = null));
    this.#canvas.addEventListener('pointermove', (e) => {
      if (!drag) return;
      this.#pan = [this.#pan[0] + e.clientX - drag[0], this.#pan[1] + e.clientY - drag[1]];
      drag = [e.clientX, e.clientY];
      this.#draw();
    });
    this.#canvas.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        this.#zoom = Math.min(40, Math.max(0.2, this.#zoom * (e.deltaY < 0 ? 1.15 : 1 / 1.15)));
        this.#draw();
      },
      { passive: false },
    );
    this.#canvas.addEventListener('keydown', (e) => {
      const step = 40;
      const moves = {
        ArrowLeft: [step, 0],
        ArrowRight: [-step, 0],
        ArrowUp: [0, step],
        ArrowDown: [0, -step],
      };
      if (moves[e.key])
        this.#pan = [this.#pan[0] + moves[e.key][0], this.#pan[1] + moves[e.key][1]];
      else if (e.key === '+' || e.key === '=') this.#zoom = Math.min(40, this.#zoom * 1.25);
      else if (e.key === '-') this.#zoom = Math.max(0.2, this.#zoom / 1.25);
      else if (e.key === '0') ((this.#zoom = 1), (this.#pan = [0, 0]));
      else return;
      e.preventDefault();
      this.#draw();
    });
  }
}
