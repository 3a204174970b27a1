// The fleet view: every robot the relay lists, as a card with its name and model, whether this
// cockpit watches it, when this cockpit last had a frame from it, the link's quality while
// watched (rtt and loss), and the last camera frame seen from it as a thumbnail; Watch switches
// to it. The relay's robots list carries only id, name and model, so quality and frames are what
// this cockpit saw itself: a robot never watched shows none yet. Loaded on first use.

const THUMB_EVERY_MS = 1000;

export class FleetView {
  #host;
  #seen = new Map(); // robotId -> {lastFrameMs, thumbUrl, thumbAt, since}
  #timer = 0;

  /** @param {{session: object, taps: Set<Function>, stats: () => {rateHz: number, lossPct: number}[], kindOf: (e: string) => string}} host */
  constructor(host) {
    this.#host = host;
    this.el = document.querySelector('#fleet');
    host.taps.add((frame) => this.#onFrame(frame));
  }

  #entry(id) {
    let e = this.#seen.get(id);
    if (!e)
      this.#seen.set(id, (e = { lastFrameMs: 0, thumbUrl: null, thumbAt: 0, since: Date.now() }));
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
      let quality = 'link: not watched';
      if (watching) {
        const snaps = this.#host.stats();
        const loss = snaps.length ? Math.max(...snaps.map((x) => x.lossPct)) : 0;
        quality = `link: rtt ${s.rttMs == null ? '–' : `${s.rttMs.toFixed(0)} ms`}, loss ${loss.toFixed(1)}%`;
      }
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
