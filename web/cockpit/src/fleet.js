// The fleet view: every robot the relay lists, as a card with its name and model, whether this
// cockpit watches it, when this cockpit last had a frame from it, its link quality (rtt, loss and
// frame age, and a verdict: good, degraded, stalled) and the last camera frame seen from it as a
// thumbnail; Watch switches to it. The relay's robots list carries only id, name and model, so
// quality and frames are what this cockpit measured itself: live for the watched robot, and for a
// robot watched before, its last figures with their age; a robot never watched shows none yet.
// Loaded on first use.

const THUMB_EVERY_MS = 1000;
// The watched robot's link is stalled when no frame came for this long (every demo and SDK robot
// sends pose or stats several times a second), degraded past these loss and rtt figures.
export const STALLED_AFTER_MS = 2000;
export const DEGRADED_LOSS_PCT = 5;
export const DEGRADED_RTT_MS = 500;

/** good | degraded | stalled for a link's figures; unknown before any frame. */
export function linkVerdict({ frameAgeMs, lossPct, rttMs }) {
  if (frameAgeMs == null) return 'unknown';
  if (frameAgeMs > STALLED_AFTER_MS) return 'stalled';
  if (lossPct > DEGRADED_LOSS_PCT || (rttMs != null && rttMs > DEGRADED_RTT_MS)) return 'degraded';
  return 'good';
}

export class FleetView {
  #host;
  #seen = new Map(); // robotId -> {lastFrameMs, thumbUrl, thumbAt, since}
  /** @type {ReturnType<typeof setInterval> | undefined} */
  #timer;

  /** @param {{session: object, taps: Set<Function>, stats: () => {rateHz: number, lossPct: number}[], kindOf: (e: string) => string}} host */
  constructor(host) {
    this.#host = host;
    this.el = /** @type {HTMLElement} */ (document.querySelector('#fleet'));
    host.taps.add((frame) => this.#onFrame(frame));
  }

  #entry(id) {
    let e = this.#seen.get(id);
    if (!e)
      this.#seen.set(
        id,
        (e = { lastFrameMs: 0, thumbUrl: null, thumbAt: 0, since: Date.now(), link: null }),
      );
    return e;
  }

  #onFrame(frame) {
    const s = this.#host.session.state;
    if (!s.robotId || !s.manifest) return;
    const e = this.#entry(s.robotId);
    e.lastFrameMs = Date.now();
    const ch = s.manifest.channels.find((c) => c.ch === frame.header.ch);
    if (
      !ch ||
      this.#host.kindOf(ch.encoding) !== 'jpeg' ||
      e.lastFrameMs - e.thumbAt < THUMB_EVERY_MS
    )
      return;
    e.thumbAt = e.lastFrameMs;
    if (e.thumbUrl) URL.revokeObjectURL(e.thumbUrl);
    e.thumbUrl = URL.createObjectURL(new Blob([frame.payload.slice()], { type: 'image/jpeg' }));
  }

  toggle() {
    this.el.hidden = !this.el.hidden;
    clearInterval(this.#timer);
    if (!this.el.hidden) {
      this.render();
      this.#timer = setInterval(() => this.render(), 1000);
    }
  }

  render() {
    const s = this.#host.session.state;
    const ago = (ms) =>
      ms ? `${Math.max(0, Math.round((Date.now() - ms) / 1000))} s ago` : 'no frame yet';
    const cards = s.robots.map((r) => {
      const e = this.#entry(r.id);
      const watching = r.id === s.robotId;
      const li = document.createElement('li');
      li.className = 'fleet-card';
      li.dataset.robot = r.id;
      li.dataset.watching = String(watching);
      const img = document.createElement('img');
      img.className = 'fleet-thumb';
      img.alt = `${r.name || r.id}: last camera frame`;
      if (e.thumbUrl) img.src = e.thumbUrl;
      const title = document.createElement('h3');
      title.textContent = `${r.name || r.id} (${r.model || 'robot'})`;
      const facts = document.createElement('p');
      facts.className = 'hint';
      // The watched robot's figures are measured now and kept; another's are its last ones.
      if (watching) {
        const snaps = this.#host.stats();
        const link = {
          rttMs: s.rttMs,
          lossPct: snaps.length ? Math.max(...snaps.map((x) => x.lossPct)) : 0,
          frameAgeMs: e.lastFrameMs ? Date.now() - e.lastFrameMs : null,
          at: Date.now(),
        };
        e.link = { ...link, verdict: linkVerdict(link) };
      }
      const l = e.link;
      li.dataset.link = !l ? 'unknown' : watching ? l.verdict : `was-${l.verdict}`;
      const figures = l
        ? `rtt ${l.rttMs == null ? '–' : `${l.rttMs.toFixed(0)} ms`}, loss ${l.lossPct.toFixed(1)}%, ` +
          `frame age ${l.frameAgeMs == null ? '–' : `${(l.frameAgeMs / 1000).toFixed(1)} s`}`
        : '';
      const quality = !l
        ? 'link: not watched yet'
        : watching
          ? `link ${l.verdict}: ${figures}`
          : `link ${l.verdict} when last watched (${ago(l.at)}): ${figures}`;
      facts.textContent = `${r.id} · ${watching ? 'watching' : 'online'} · last frame ${ago(e.lastFrameMs)} · ${quality}`;
      const watch = document.createElement('button');
      watch.type = 'button';
      watch.textContent = watching ? 'Watching' : 'Watch';
      watch.disabled = watching;
      watch.addEventListener('click', () => {
        this.#host.session.watch(r.id);
        this.render();
      });
      li.append(img, title, facts, watch);
      return li;
    });
    const list = document.createElement('ul');
    list.className = 'fleet-list';
    list.append(...cards);
    this.el.replaceChildren(list);
    if (!cards.length) this.el.textContent = 'No robots online.';
  }
}
