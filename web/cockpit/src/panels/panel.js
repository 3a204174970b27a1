// What every panel shares: a titled frame, the channels it wants, a decoder per channel, and
// counters for rate and decode errors. A panel kind supplies `render` and may add controls.
import { ChannelStats } from '../channel-stats.js';

/**
 * What a panel is built with: web/cockpit/src/app.js's context plus the panel's own entry.
 * @typedef {object} PanelContext
 * @property {any} panel the panel's entry in the manifest's layout
 * @property {any} manifest the robot's manifest
 * @property {any} decode the decode module (its ChannelDecoder)
 * @property {import('../session.js').ViewerSession} session
 * @property {(ch: string, value: unknown, id: string) => boolean} [publish] a JSON value on a tx
 *   channel; true when it went out
 * @property {number} [maxPublishBytes] the protocol's bound on one published value
 * @property {() => void} [rewant] the panel's wanted channels changed
 * @property {(el: HTMLElement) => void} [mounted]
 * @property {number} [lastVoxelRes] the 3D map's last voxel size (a clear frame carries none)
 */

export class Panel {
  /** @param {PanelContext} ctx */
  constructor(ctx) {
    this.ctx = ctx;
    this.spec = ctx.panel;
    this.channels = ctx.panel.channels.map((id) => ctx.manifest.channels.find((c) => c.ch === id));
    this.decoders = new Map(
      this.channels.map((c) => [c.ch, new ctx.decode.ChannelDecoder(c.encoding)]),
    );
    this.stats = new Map(this.channels.map((c) => [c.ch, new ChannelStats()]));
    this.el = document.createElement('section');
    this.el.className = `panel panel-${this.spec.kind}`;
    this.el.dataset.panelId = this.spec.id;
    this.el.setAttribute('aria-label', this.spec.title);
    const head = document.createElement('header');
    head.className = 'panel-head';
    this.titleEl = document.createElement('h2');
    this.titleEl.textContent = this.spec.title;
    this.badge = document.createElement('span');
    this.badge.className = 'panel-badge';
    head.append(this.titleEl, this.badge);
    this.body = document.createElement('div');
    this.body.className = 'panel-body';
    this.el.append(head, this.body);
  }

  /** The rx channels to subscribe to while the panel is visible. */
  wantedChannels() {
    return this.channels.filter((c) => c.dir === 'rx').map((c) => c.ch);
  }

  /** A data frame for one of this panel's channels. */
  onFrame(frame) {
    const dec = this.decoders.get(frame.header.ch);
    if (!dec) return;
    this.stats.get(frame.header.ch).record(frame.header.seq, performance.now());
    const r = dec.decode(frame.header.meta, frame.payload);
    if (r.ok) this.render(frame.header.ch, dec);
    this.updateBadge();
  }

  decodeErrors() {
    let n = 0;
    for (const d of this.decoders.values()) n += d.errors;
    return n;
  }

  updateBadge() {
    const errors = this.decodeErrors();
    this.badge.textContent = errors ? `${errors} decode error${errors === 1 ? '' : 's'}` : '';
    this.badge.dataset.errors = String(errors);
  }

  // Overridden by kinds.
  /** @param {string} _ch the channel a frame decoded on @param {object} _decoder its decoder */
  render(_ch, _decoder) {}
  onTick() {}

  destroy() {
    for (const d of this.decoders.values()) d.close();
    this.el.remove();
  }
}
