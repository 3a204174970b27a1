// The cockpit: connects to the relay named by /api/info, lists robots, lays out the watched
// robot's manifest, subscribes only to channels of visible panels, and routes frames to panels.
import { loadTetherModule } from '../../glue/load.js';
import '../../glue/modules/tether-cockpit.js';
import { createWire } from '../../glue/wire.js';
import { createDecode } from '../../glue/decode.js';
import { ViewerSession } from './session.js';
import { renderLayout, tabsFor, panelsOnTab } from './layout.js';
import { createPanel } from './panels/index.js';
import { ChannelStats } from './channel-stats.js';
import { LayoutOwner } from './layout-owner.js';

const $ = (sel) => document.querySelector(sel);
const encoder = new TextEncoder();

export async function startCockpit({ infoUrl = '/api/info', token = null } = {}) {
  const wasm = await fetch(new URL('./tether-cockpit.wasm', import.meta.url));
  if (!wasm.ok)
    throw new Error(`could not fetch tether-cockpit.wasm (${wasm.status}); run \`make cockpit\``);
  const bytes = new Uint8Array(await wasm.arrayBuffer());
  const mod = await loadTetherModule({ wasmBinary: bytes }, 'cockpit_clients');
  const wire = createWire(mod);
  const decode = createDecode(mod);
  const infoRes = await fetch(infoUrl);
  if (!infoRes.ok)
    throw new Error(`GET ${infoUrl} answered ${infoRes.status}; is the relay running?`);
  const info = await infoRes.json();

  const ui = {
    panels: new Map(), // panel id -> Panel
    raw: new Map(), // channel -> RawView
    stats: new Map(), // channel -> ChannelStats (every subscribed channel)
    tab: '__main',
    manifestKey: null,
    taps: new Set(), // (frame) => void: the recorder, tests
    recording: [], // channels a recording needs subscribed
    replay: null, // the manifest being replayed; live frames are ignored meanwhile
  };

  const session = new ViewerSession({
    mod,
    wire,
    info,
    token,
    listener: (state, event) => onSession(state, event),
    onFrame: (f) => ui.replay || onFrame(f),
  });

  const ctxBase = {
    decode,
    session,
    /** A JSON value on a tx channel; true when it went out (pub_ack or pub_nack answers it). */
    publish: (ch, value, id) =>
      session.publish(ch, encoder.encode(JSON.stringify(value)), id) === 'sent',
    /** The protocol's bound on one published value, from the wire core. */
    maxPublishBytes: wire.limits.maxPublishBytes,
    /** A panel's wanted channels changed (a plot gained a series). */
    rewant: () => updateWanted(),
  };

  function onFrame(frame) {
    for (const tap of ui.taps) tap(frame);
    const ch = frame.header.ch;
    if (!ui.stats.has(ch)) ui.stats.set(ch, new ChannelStats());
    ui.stats.get(ch).record(frame.header.seq, performance.now());
    for (const p of ui.panels.values()) if (p.channels.some((c) => c.ch === ch)) p.onFrame(frame);
    ui.raw.get(ch)?.onFrame(frame);
  }

  function onSession(state, event) {
    renderRobots(state);
    const key = state.manifest ? JSON.stringify(state.manifest) : null;
    if (key !== ui.manifestKey && !ui.replay) {
      ui.manifestKey = key;
      ui.tab = '__main';
      renderManifest(state.manifest);
    }
    for (const p of ui.panels.values()) p.refresh?.();
    if (event?.type === 'message') {
      for (const p of ui.panels.values()) p.onMessage?.(event.message);
      if (event.message.t === 'error') showError(event.message);
    }
    renderStatus();
  }

  function renderRobots(state) {
    const select = $('#robot');
    const current = state.robotId ?? '';
    const options = [['', state.robots.length ? 'Choose a robot' : 'No robots online']].concat(
      state.robots.map((r) => [r.id, `${r.name || r.id} (${r.model || 'robot'})`]),
    );
    const sig = JSON.stringify(options) + current;
    if (select.dataset.sig === sig) return;
    select.dataset.sig = sig;
    select.replaceChildren(
      ...options.map(([value, label]) => {
        const o = document.createElement('option');
        o.value = value;
        o.textContent = label;
        o.selected = value === current;
        return o;
      }),
    );
    if (!state.robotId && state.robots.length === 1) session.watch(state.robots[0].id);
  }

  const owner = new LayoutOwner({
    validate: (m) => wire.validateManifest(m),
    kindOf: (e) => decode.encodingKind(e),
    rerender: () => renderManifest(ui.replay ?? session.state.manifest),
  });

  function renderManifest(robotManifest) {
    // The main tab shows the operator's own layout when there is one (layout-owner.js).
    const manifest =
      robotManifest && !ui.replay
        ? owner.effective(robotManifest, session.state.robotId)
        : robotManifest;
    $('#layout-note').textContent = owner.note;
    for (const p of ui.panels.values()) p.destroy();
    ui.panels.clear();
    for (const r of ui.raw.values()) r.destroy();
    ui.raw.clear();
    const tabs = $('#tabs');
    const main = $('#panels');
    main.replaceChildren();
    tabs.replaceChildren();
    renderChannelList(manifest);
    if (!manifest) {
      main.textContent =
        session.state.manifestError === 'manifestUnsupported'
          ? 'This robot’s manifest is of a version this cockpit does not read (manifestUnsupported): update the cockpit.'
          : session.state.robotId
            ? 'Waiting for the robot’s manifest…'
            : 'Choose a robot to watch.';
      session.want([]);
      return;
    }
    for (const t of tabsFor(manifest)) {
      const b = document.createElement('button');
      b.type = 'button';
      b.role = 'tab';
      b.textContent = t.title;
      b.setAttribute('aria-selected', String(t.id === ui.tab));
      b.addEventListener('click', () => {
        ui.tab = t.id;
        renderManifest(manifest);
      });
      tabs.append(b);
    }
    const visible = new Set(panelsOnTab(manifest, ui.tab));
    const mount = (id) => {
      const spec = manifest.panels.find((p) => p.id === id);
      // `mounted` runs for the panel's element, and again for the real one when a panel that
      // loads later replaces its stand-in: edit controls go on the element the operator sees.
      const editable = owner.editing && ui.tab === '__main';
      const mounted = (el) => editable && owner.decorate(el, id);
      const panel = createPanel({ ...ctxBase, panel: spec, manifest, mounted });
      ui.panels.set(id, panel);
      mounted(panel.el);
      return panel.el;
    };
    const gap = owner.editing ? (...a) => owner.resizer(...a) : null;
    main.append(
      ui.tab === '__main' ? renderLayout(manifest.layout, mount, gap) : mount([...visible][0]),
    );
    updateWanted();
  }

  function updateWanted() {
    const wanted = new Set();
    for (const p of ui.panels.values()) for (const ch of p.wantedChannels()) wanted.add(ch);
    for (const ch of ui.raw.keys()) wanted.add(ch);
    for (const ch of ui.recording) wanted.add(ch);
    session.want(ui.replay ? ui.recording : [...wanted]);
  }

  function renderChannelList(manifest) {
    const list = $('#channels');
    list.replaceChildren();
    for (const c of manifest?.channels ?? []) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = `${c.ch} · ${c.encoding} · ${c.dir}`;
      b.disabled = c.dir !== 'rx';
      // Media tracks (video.webrtc.v1) carry no frames to record.
      if (c.dir === 'rx' && !ui.replay && decode.encodingKind(c.encoding) !== 'track') {
        const pick = Object.assign(document.createElement('input'), {
          type: 'checkbox',
          checked: true,
          className: 'rec-pick',
        });
        pick.dataset.ch = c.ch;
        pick.setAttribute('aria-label', `record ${c.ch}`);
        li.append(pick);
      }
      b.addEventListener('click', async () => {
        if (ui.raw.has(c.ch)) {
          ui.raw.get(c.ch).destroy();
          ui.raw.delete(c.ch);
        } else {
          // The inspector loads on first use.
          const { RawView } = await import('./raw-view.js');
          if (ui.raw.has(c.ch)) return; // opened by a click while it loaded
          const view = new RawView(c, {
            decode,
            onClose: () => {
              ui.raw.delete(c.ch);
              updateWanted();
            },
          });
          ui.raw.set(c.ch, view);
          $('#raw').append(view.el);
        }
        updateWanted();
      });
      li.append(b);
      if (owner.editing && c.dir === 'rx') {
        const add = Object.assign(document.createElement('button'), {
          type: 'button',
          textContent: '+',
        });
        add.className = 'panel-add';
        add.setAttribute('aria-label', `add a panel for ${c.ch}`);
        add.addEventListener('click', () => owner.add(c));
        li.append(add);
      }
      list.append(li);
    }
  }

  function showError(m) {
    const box = $('#errors');
    box.textContent = `${m.code}: ${m.message}${wire.errorCodes[m.code] ? ` (${wire.errorCodes[m.code].fix})` : ''}`;
  }

  function renderStatus() {
    const s = session.state;
    const now = performance.now();
    // Closed for good (a final error): the core stopped reconnecting and says what to fix.
    const final = s.link.state === 'closed' && s.link.code;
    const link =
      s.link.state === 'open'
        ? `connected (${session.transport})`
        : final
          ? `stopped: ${s.link.code}`
          : s.link.state;
    $('#status-link').textContent = link;
    $('#status-link').dataset.state = s.link.state;
    if (final) {
      const box = $('#errors');
      box.textContent = `${s.link.code}: ${s.link.detail} (the cockpit stopped reconnecting; fix this and reload)`;
      box.dataset.final = s.link.code;
    }
    $('#status-rtt').textContent = s.rttMs == null ? 'rtt –' : `rtt ${s.rttMs.toFixed(0)} ms`;
    const parts = [];
    let errors = 0;
    for (const p of ui.panels.values()) errors += p.decodeErrors();
    for (const [ch, st] of ui.stats) {
      const snap = st.snapshot(now);
      if (snap.received)
        parts.push(
          `${ch} ${snap.rateHz.toFixed(1)} Hz${snap.lost ? `, ${snap.lossPct.toFixed(1)}% lost` : ''}`,
        );
    }
    $('#status-channels').textContent = parts.join(' · ');
    $('#status-errors').textContent =
      `decode errors ${errors} · dropped ${s.drops + s.frameErrors}`;
    $('#status-errors').dataset.decodeErrors = String(errors);
  }

  $('#robot').addEventListener('change', (e) => e.target.value && session.watch(e.target.value));
  $('#layout-edit').addEventListener('click', async (e) => {
    if (owner.editing) owner.editing = false;
    else await owner.startEditing();
    $('#layout-link').hidden = true;
    e.target.setAttribute('aria-pressed', String(owner.editing));
    e.target.textContent = owner.editing ? 'Done' : 'Edit layout';
    document.body.classList.toggle('editing-layout', owner.editing);
    ui.tab = '__main';
    renderManifest(ui.replay ?? session.state.manifest);
  });
  $('#layout-share').addEventListener('click', () => {
    const url = owner.shareUrl();
    $('#layout-link').value = url;
    $('#layout-link').hidden = false;
    navigator.clipboard?.writeText(url).catch(() => {});
  });
  $('#layout-reset').addEventListener('click', () => {
    $('#layout-link').hidden = true; // the link named the layout just dropped
    owner.reset();
  });
  let fleet = null;
  $('#fleet-toggle').addEventListener('click', async () => {
    if (!fleet) {
      const { FleetView } = await import('./fleet.js');
      fleet ??= new FleetView({
        session,
        taps: ui.taps,
        stats: () => [...ui.stats.values()].map((s) => s.snapshot(performance.now())),
        kindOf: (e) => decode.encodingKind(e),
      });
    }
    fleet.toggle();
  });
  // Record and replay (record/controls.js) load on first use.
  const recordHost = {
    wire,
    decode,
    manifest: () => session.state.manifest,
    robotId: () => session.state.robotId,
    replaying: () => ui.replay !== null,
    addTap: (fn) => (ui.taps.add(fn), () => ui.taps.delete(fn)),
    setRecording: (chs) => ((ui.recording = chs), updateWanted()),
    feed: (frame) => onFrame(frame),
    enterReplay: (manifest) => {
      ui.replay = manifest;
      ui.stats.clear(); // rates and loss of the replay, not mixed with the live link's
      ui.tab = '__main';
      renderManifest(manifest);
    },
    leaveReplay: () => {
      ui.replay = null;
      ui.stats.clear();
      ui.manifestKey = null;
      onSession(session.state);
    },
  };
  const controls = () => import('./record/controls.js');
  $('#record').addEventListener('click', () =>
    controls().then((c) => c.toggleRecording(recordHost)),
  );
  $('#open-mcap').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) controls().then((c) => c.openRecording(recordHost, file));
  });
  setInterval(() => {
    const now = performance.now();
    for (const p of ui.panels.values()) p.onTick(now);
    for (const r of ui.raw.values()) r.onTick(now);
    renderStatus();
  }, 500);
  window.addEventListener('pagehide', () => {
    for (const p of ui.panels.values()) p.destroy();
    session.close();
  });
  session.start();
  return { session, ui };
}
