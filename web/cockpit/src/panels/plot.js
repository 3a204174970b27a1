// plot: time series of numeric fields picked by message path (`pose.x`, `stats.teleop.vx`,
// `a.b[0].c`) on any JSON channel, drawn with uPlot. Several series share the time axis (the
// frames' ts, so a replay plots as it was live). It follows the newest WINDOW_S seconds until an
// operator drags across it to zoom (double-click or Reset zoom follows again); Pause freezes the
// view while points keep being collected. Loaded on first use (panels/index.js).
import uPlot from 'uplot';
import uplotCss from 'uplot/dist/uPlot.min.css';
import { Panel } from './panel.js';
import { ChannelStats } from '../channel-stats.js';
import { parseMessagePath, valueAt } from './message-path.js';

export const MAX_POINTS = 5000; // per series
export const MAX_SERIES = 8;
const WINDOW_S = 30;
const COLOURS = [
  '#35c2ff',
  '#ffd166',
  '#6ee7a0',
  '#ff6b6b',
  '#c792ea',
  '#f78c6c',
  '#89ddff',
  '#e6e6e6',
];

let styled = false;
function addStyle() {
  if (styled) return;
  styled = true;
  document.head.append(Object.assign(document.createElement('style'), { textContent: uplotCss }));
}

export class PlotPanel extends Panel {
  #series = []; // {path, ch, steps, colour, xs: [], ys: []}
  #plot = null;
  #chart = document.createElement('div');
  #legend = document.createElement('ul');
  #error = document.createElement('p');
  #paused = false;
  #zoomed = false;
  #dirty = false;
  /** A drag to zoom is under way: new data waits, since a redraw mid-drag cancels the selection. */
  #dragging = false;
  #ts = 0;
  #resize;

  constructor(ctx) {
    super(ctx);
    addStyle();
    const form = document.createElement('form');
    form.className = 'plot-form';
    const input = Object.assign(document.createElement('input'), {
      type: 'text',
      placeholder: 'pose.x, stats.teleop.vx, a.b[0].c',
    });
    input.setAttribute('aria-label', 'Message path');
    const add = Object.assign(document.createElement('button'), {
      type: 'submit',
      textContent: 'Add',
    });
    const pause = Object.assign(document.createElement('button'), {
      type: 'button',
      textContent: 'Pause',
    });
    pause.addEventListener('click', () => {
      this.#paused = !this.#paused;
      pause.textContent = this.#paused ? 'Resume' : 'Pause';
      pause.setAttribute('aria-pressed', String(this.#paused));
      this.el.dataset.paused = String(this.#paused);
      this.#schedule();
    });
    const reset = Object.assign(document.createElement('button'), {
      type: 'button',
      textContent: 'Reset zoom',
    });
    reset.addEventListener('click', () => this.#unzoom());
    form.append(input, add, pause, reset);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (this.addSeries(input.value)) input.value = '';
    });
    this.#error.className = 'hint plot-error';
    this.#legend.className = 'plot-legend';
    this.#chart.className = 'plot-chart';
    this.body.append(form, this.#error, this.#legend, this.#chart);
    this.el.dataset.paused = 'false';
    this.el.dataset.zoomed = 'false';
    for (const p of this.spec.params?.paths ?? []) this.addSeries(p);
    this.#resize = new ResizeObserver(() => this.#rebuild());
    this.#resize.observe(this.#chart);
  }

  #jsonChannels() {
    const kind = this.ctx.decode.encodingKind;
    return this.ctx.manifest.channels
      .filter((c) => c.dir === 'rx' && ['json', 'pose'].includes(kind(c.encoding)))
      .map((c) => c.ch);
  }

  /** Adds a series by message path; false (and a message saying why) when it cannot. */
  addSeries(text) {
    const parsed = parseMessagePath(text, this.#jsonChannels());
    const path = text.trim();
    let error = parsed.ok === false ? parsed.error : null;
    if (!error && this.#series.some((s) => s.path === path)) error = `"${path}" is already plotted`;
    if (!error && this.#series.length >= MAX_SERIES)
      error = `a plot holds at most ${MAX_SERIES} series; remove one first`;
    this.#error.textContent = error ?? '';
    if (error || parsed.ok === false) return false;
    if (!this.decoders.has(parsed.ch)) {
      const c = this.ctx.manifest.channels.find((x) => x.ch === parsed.ch);
      this.channels.push(c);
      this.decoders.set(c.ch, new this.ctx.decode.ChannelDecoder(c.encoding));
      this.stats.set(c.ch, new ChannelStats());
    }
    const used = new Set(this.#series.map((s) => s.colour));
    const colour = COLOURS.find((c) => !used.has(c));
    this.#series.push({ path, ch: parsed.ch, steps: parsed.steps, colour, xs: [], ys: [] });
    this.#renderLegend();
    this.#rebuild();
    this.ctx.rewant?.();
    return true;
  }

  removeSeries(path) {
    this.#series = this.#series.filter((s) => s.path !== path);
    this.#renderLegend();
    this.#rebuild();
    this.ctx.rewant?.();
  }

  wantedChannels() {
    const chans = new Set(this.#series.map((s) => s.ch));
    return this.channels.filter((c) => c.dir === 'rx' && chans.has(c.ch)).map((c) => c.ch);
  }

  onFrame(frame) {
    this.#ts = frame.header.ts || Date.now() / 1000;
    super.onFrame(frame);
  }

  render(ch, dec) {
    const value = dec.value;
    for (const s of this.#series) {
      if (s.ch !== ch) continue;
      const v = valueAt(value, s.steps);
      if (v === null) continue;
      s.xs.push(this.#ts);
      s.ys.push(v);
      if (s.xs.length > MAX_POINTS) {
        s.xs.shift();
        s.ys.shift();
      }
    }
    this.#schedule();
  }

  #schedule() {
    if (this.#dirty || this.#paused) return;
    this.#dirty = true;
    requestAnimationFrame(() => {
      this.#dirty = false;
      this.#draw();
    });
  }

  #data() {
    if (!this.#series.length) return [[]];
    const newest = Math.max(...this.#series.map((s) => s.xs.at(-1) ?? -Infinity));
    const from = this.#zoomed ? -Infinity : newest - WINDOW_S;
    const tables = this.#series.map((s) => {
      let i = s.xs.length;
      while (i > 0 && s.xs[i - 1] >= from) i--;
      return [s.xs.slice(i), s.ys.slice(i)];
    });
    return tables.length === 1 ? tables[0] : uPlot.join(tables);
  }

  #draw() {
    if (!this.#plot || this.#paused || this.#dragging) return;
    const data = this.#data();
    this.#plot.setData(data, !this.#zoomed);
    const shown = this.#series.map((s, i) => {
      const ys = data[i + 1] ?? [];
      let last = null;
      let n = 0;
      for (const y of ys) if (y !== null && y !== undefined) ((last = y), n++);
      return { path: s.path, n, last };
    });
    this.el.dataset.series = JSON.stringify(shown);
    const x = this.#plot.scales.x;
    this.el.dataset.xRange = JSON.stringify([x.min, x.max]);
  }

  #rebuild() {
    this.#plot?.destroy();
    this.#plot = null;
    const width = this.#chart.clientWidth;
    const height = Math.max(120, this.#chart.clientHeight);
    if (!width || !this.#series.length) return;
    this.#plot = new uPlot(
      {
        width,
        height,
        legend: { show: false },
        scales: { x: { time: true } },
        axes: [
          { stroke: '#8d97a8', grid: { stroke: '#2a3040' } },
          { stroke: '#8d97a8', grid: { stroke: '#2a3040' } },
        ],
        series: [
          {},
          ...this.#series.map((s) => ({
            label: s.path,
            stroke: s.colour,
            width: 1.5,
            spanGaps: true,
          })),
        ],
        cursor: { drag: { x: true, y: false, setScale: true } },
        hooks: {
          setSelect: [(u) => u.select.width > 0 && this.#zoom()],
        },
      },
      this.#data(),
      this.#chart,
    );
    this.#plot.over.addEventListener('dblclick', () => this.#unzoom());
    this.#plot.over.addEventListener('mousedown', () => {
      this.#dragging = true;
      // After uPlot's own mouseup handler has applied the selection, draw what arrived meanwhile.
      window.addEventListener(
        'mouseup',
        () =>
          setTimeout(() => {
            this.#dragging = false;
            this.#draw();
          }),
        { once: true },
      );
    });
    this.#draw();
  }

  #zoom() {
    this.#zoomed = true;
    this.el.dataset.zoomed = 'true';
  }

  #unzoom() {
    this.#zoomed = false;
    this.el.dataset.zoomed = 'false';
    this.#draw();
  }

  #renderLegend() {
    this.#legend.replaceChildren(
      ...this.#series.map((s) => {
        const li = document.createElement('li');
        li.style.setProperty('--series', s.colour);
        li.dataset.path = s.path;
        const remove = Object.assign(document.createElement('button'), {
          type: 'button',
          textContent: '×',
        });
        remove.setAttribute('aria-label', `remove ${s.path}`);
        remove.addEventListener('click', () => this.removeSeries(s.path));
        li.append(s.path, remove);
        return li;
      }),
    );
  }

  destroy() {
    this.#resize.disconnect();
    this.#plot?.destroy();
    super.destroy();
  }
}
