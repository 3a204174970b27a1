// The record and replay controls, loaded the first time an operator presses Record or opens a
// file (the MCAP library never weighs on the first load). Record writes the channels ticked in
// the channel list; Open replays a file through the same panels with a timeline.
import { Recorder } from './recorder.js';
import { Player } from './player.js';

const $ = (sel) => document.querySelector(sel);
const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];
const mib = (n) => `${(n / 1048576).toFixed(1)} MiB`;
const clock = (ms) =>
  `${Math.floor(ms / 60000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}.${String(Math.floor(ms) % 1000).padStart(3, '0')}`;

let recorder = null;
let untap = null;
let ticker = null;
let player = null;
let starting = false;

/** Starts recording, or stops and offers the file. */
export async function toggleRecording(host) {
  if (starting) return; // a second press while the file opens
  const status = $('#recording');
  const button = $('#record');
  status.hidden = false;
  if (recorder) {
    const r = recorder;
    recorder = null;
    untap();
    clearInterval(ticker);
    host.setRecording([]);
    button.textContent = 'Record';
    button.setAttribute('aria-pressed', 'false');
    status.textContent = 'finishing the file…';
    try {
      const file = await r.stop();
      const a = document.createElement('a');
      a.href = URL.createObjectURL(file);
      a.download = r.name;
      a.id = 'recording-download';
      a.textContent = `Download ${r.name} (${mib(file.size)})`;
      a.dataset.counts = JSON.stringify(Object.fromEntries(r.counts));
      status.replaceChildren(a);
    } catch (e) {
      status.textContent = e.message;
    }
    return;
  }
  if (host.replaying()) {
    status.textContent = 'A recording is replaying: press Back to live, then Record.';
    return;
  }
  const manifest = host.manifest();
  const picked = /** @type {NodeListOf<HTMLInputElement>} */ (
    document.querySelectorAll('.rec-pick:checked')
  );
  const channels = [...picked].map((b) => b.dataset.ch);
  if (!manifest || !channels.length) {
    status.textContent = 'Watch a robot and tick the channels to record first.';
    return;
  }
  const robotId = host.robotId();
  starting = true;
  try {
    recorder = await Recorder.start({
      manifest,
      robotId,
      channels,
      wire: host.wire,
      decode: host.decode,
    });
  } catch (e) {
    status.textContent = `could not start recording: ${e.message}`;
    return;
  } finally {
    starting = false;
  }
  const started = performance.now();
  const r = recorder;
  host.setRecording(channels);
  // One robot per file: frames after a switch to another robot are not this recording's.
  untap = host.addTap(
    (frame) =>
      host.robotId() === robotId && r.add(frame, performance.timeOrigin + performance.now()),
  );
  button.textContent = 'Stop recording';
  button.setAttribute('aria-pressed', 'true');
  ticker = setInterval(() => {
    let n = 0;
    for (const c of r.counts.values()) n += c;
    status.textContent = `recording ${r.channels.join(', ')}: ${clock(performance.now() - started)}, ${n} messages${r.dropped ? `, ${r.dropped} dropped (the disk is behind)` : ''}`;
    status.dataset.messages = String(n);
  }, 250);
}

/** Opens an MCAP file and replays it through the panels. */
export async function openRecording(host, file) {
  player?.pause();
  const timeline = $('#timeline');
  timeline.hidden = false;
  timeline.textContent = `opening ${file.name}…`;
  try {
    player = await Player.open(file, {
      wire: host.wire,
      decode: host.decode,
      emit: (frame) => host.feed(frame),
    });
  } catch (e) {
    timeline.textContent = `${file.name} is not a readable MCAP file (${e.message}); open an indexed .mcap file`;
    return;
  }
  const p = player;
  // The manifest a file carries is input like any other: the wire core normalises it or names
  // what is wrong.
  const v = host.wire.validateManifest(p.manifest);
  if (!v.ok) {
    timeline.textContent = `${file.name} carries an invalid manifest (${JSON.stringify(v.errors).slice(0, 300)}); record it again`;
    return;
  }
  host.enterReplay(v.manifest, p.robotId);
  renderTimeline(host, p, file.name);
  await p.seek(p.start);
  p.play();
}

function renderTimeline(host, p, name) {
  const timeline = $('#timeline');
  const play = button('Pause', () => (p.playing ? p.pause() : p.play()));
  play.id = 'replay-play';
  const speed = document.createElement('select');
  speed.id = 'replay-speed';
  speed.setAttribute('aria-label', 'Replay speed');
  speed.append(
    ...SPEEDS.map((s) =>
      Object.assign(document.createElement('option'), {
        value: String(s),
        textContent: `${s}×`,
        selected: s === 1,
      }),
    ),
  );
  speed.addEventListener('change', () => p.setSpeed(Number(speed.value)));
  const scrub = document.createElement('input');
  scrub.type = 'range';
  scrub.id = 'replay-scrub';
  scrub.setAttribute('aria-label', 'Position in the recording');
  scrub.min = '0';
  scrub.max = String(Math.max(1, Math.round(p.durationMs)));
  scrub.step = '1';
  scrub.addEventListener('input', () => p.seek(p.start + BigInt(Number(scrub.value)) * 1000000n));
  const at = document.createElement('span');
  at.className = 'replay-at';
  const live = button('Back to live', () => {
    p.pause();
    clearInterval(timer);
    timeline.hidden = true;
    timeline.replaceChildren();
    host.leaveReplay();
  });
  const label = document.createElement('span');
  label.textContent = `replay: ${name}`;
  const bad = document.createElement('span');
  bad.className = 'replay-bad';
  timeline.replaceChildren(label, play, speed, scrub, at, bad, live);
  const timer = setInterval(() => {
    const ms = Number(p.position - p.start) / 1e6;
    if (document.activeElement !== scrub) scrub.value = String(Math.round(ms));
    at.textContent = `${clock(ms)} / ${clock(p.durationMs)}`;
    play.textContent = p.playing ? 'Pause' : 'Play';
    timeline.dataset.playing = String(p.playing);
    timeline.dataset.positionMs = String(Math.round(ms));
    timeline.dataset.bytesRead = String(p.readable.bytesRead);
    bad.textContent = p.badMessages ? `${p.badMessages} unreadable messages skipped` : '';
  }, 100);
}

function button(label, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}
