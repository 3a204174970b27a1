// chat: send text (and voice) to the robot's agent and read its replies. Four channels, in order
// (cockpit-wire-protocol.md § Manifest): text.json.v1 shared tx, chat.json.v1 rx, json.v1 agent
// state rx, audio.json.v1 shared tx. Both tx channels are publishes (v7 notes § Publishing): each
// message shows what the relay or the robot answered, delivered on pub_ack, refused with the
// reason on pub_nack, never "sending" forever.
//
// audio.json.v1 (this project's shape, docs/cockpit-protocol.md § Encodings): hold "Talk" and the
// microphone is recorded with the browser's MediaRecorder; each recorded piece goes out as
// {clip, part, last, mime, data} with `data` the piece's bytes in base64, split so every value
// stays under the protocol's published-value bound.
import { Panel } from './panel.js';

const RECORD_SLICE_MS = 250; // how often the recorder hands over a piece

export class ChatPanel extends Panel {
  #log = document.createElement('ol');
  #state = document.createElement('pre');
  #form = document.createElement('form');
  #input = document.createElement('input');
  #talk = document.createElement('button');
  #seq = 0;
  /** request id -> the pending entry it belongs to */
  #pending = new Map();
  #recording = null;

  constructor(ctx) {
    super(ctx);
    this.#log.className = 'chat-log';
    this.#log.setAttribute('aria-live', 'polite');
    this.#state.className = 'agent-state';
    this.#input.type = 'text';
    this.#input.placeholder = 'Message the robot';
    this.#input.setAttribute('aria-label', 'Message');
    const send = document.createElement('button');
    send.type = 'submit';
    send.textContent = 'Send';
    this.#talk.type = 'button';
    this.#talk.className = 'chat-talk';
    this.#talk.textContent = 'Hold to talk';
    this.#talk.disabled = !this.channels[3] || typeof MediaRecorder === 'undefined';
    this.#talk.addEventListener('pointerdown', () => this.#startTalking());
    for (const end of ['pointerup', 'pointerleave', 'pointercancel'])
      this.#talk.addEventListener(end, () => this.#stopTalking());
    this.#form.className = 'chat-form';
    this.#form.append(this.#input, send, this.#talk);
    this.#form.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = this.#input.value.trim();
      if (!text) return;
      const entry = this.#entry('me', text);
      if (this.#publish(this.channels[0].ch, { text }, entry)) this.#input.value = '';
    });
    this.body.append(this.#log, this.#state, this.#form);
  }

  render(ch, dec) {
    if (ch === this.channels[1]?.ch) {
      const m = dec.value;
      this.#entry(m.role ?? m.from ?? 'robot', String(m.text ?? m.message ?? JSON.stringify(m)));
    } else if (ch === this.channels[2]?.ch) {
      this.#state.textContent = JSON.stringify(dec.value, null, 1);
    }
  }

  /** A relay message: pub_ack and pub_nack settle the entry whose request they answer. */
  onMessage(m) {
    if (m.t !== 'pub_ack' && m.t !== 'pub_nack') return;
    const entry = this.#pending.get(m.id);
    if (!entry || (m.ch !== this.channels[0]?.ch && m.ch !== this.channels[3]?.ch)) return;
    this.#pending.delete(m.id);
    entry.waiting.delete(m.id);
    if (m.t === 'pub_nack') {
      entry.refused ??= `${m.code ?? 'refused'}${m.message ? `: ${m.message}` : ''}`;
    }
    this.#show(entry);
  }

  // Publishes one value for `entry`; false (and shown) when the session could not send it.
  #publish(ch, value, entry) {
    const id = `${Date.now().toString(36)}-${++this.#seq}`;
    const sent = this.ctx.publish(ch, value, id);
    if (sent) {
      entry.waiting.add(id);
      this.#pending.set(id, entry);
    } else {
      entry.unsent = true;
    }
    this.#show(entry);
    return sent;
  }

  #entry(who, text) {
    const li = document.createElement('li');
    li.className = `chat-${who === 'me' ? 'me' : 'them'}`;
    const entry = {
      li,
      who,
      text,
      waiting: new Set(),
      refused: null,
      unsent: false,
      mine: who === 'me',
    };
    this.#log.append(li);
    while (this.#log.childElementCount > 200) {
      const gone = this.#log.firstElementChild;
      for (const [id, e] of this.#pending) if (e.li === gone) this.#pending.delete(id);
      gone.remove();
    }
    this.#show(entry);
    li.scrollIntoView?.({ block: 'nearest' });
    return entry;
  }

  // One line per message: what it says, and (for ours) what became of it.
  #show(entry) {
    let status = '';
    if (entry.mine) {
      if (entry.refused) status = `refused: ${entry.refused}`;
      else if (entry.unsent) status = 'not sent: not connected';
      else if (entry.waiting.size) status = 'sending';
      else status = 'delivered';
    }
    entry.li.dataset.status = status.split(':')[0];
    entry.li.textContent = `${entry.who}: ${entry.text}${status ? ` (${status})` : ''}`;
  }

  async #startTalking() {
    if (this.#recording || this.#talk.disabled) return;
    const rec = (this.#recording = { chunks: [], stopped: false, stream: null, recorder: null });
    try {
      rec.stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (e) {
      this.#recording = null;
      this.#entry('me', `voice: the microphone is not available (${e.message})`).li.dataset.status =
        'unsent';
      return;
    }
    if (rec.stopped) return void this.#release(rec);
    rec.recorder = new MediaRecorder(rec.stream);
    rec.recorder.addEventListener('dataavailable', (e) => e.data.size && rec.chunks.push(e.data));
    rec.recorder.addEventListener('stop', () => this.#sendClip(rec));
    rec.recorder.start(RECORD_SLICE_MS);
    this.#talk.textContent = 'Recording… release to send';
  }

  #stopTalking() {
    const rec = this.#recording;
    if (!rec || rec.stopped) return;
    rec.stopped = true;
    this.#talk.textContent = 'Hold to talk';
    if (rec.recorder?.state === 'recording') rec.recorder.stop();
    else if (!rec.recorder) this.#release(rec);
  }

  #release(rec) {
    for (const t of rec.stream?.getTracks() ?? []) t.stop();
    if (this.#recording === rec) this.#recording = null;
  }

  async #sendClip(rec) {
    this.#release(rec);
    const blob = new Blob(rec.chunks, { type: rec.recorder.mimeType });
    const bytes = new Uint8Array(await blob.arrayBuffer());
    const clip = `${Date.now().toString(36)}-${++this.#seq}`;
    const entry = this.#entry('me', `voice (${(bytes.length / 1024).toFixed(1)} KiB)`);
    // Room for the JSON around the base64 text, then 3 bytes per 4 characters.
    const room = Math.floor(((this.ctx.maxPublishBytes - 512) * 3) / 4);
    const parts = Math.max(1, Math.ceil(bytes.length / room));
    for (let part = 0; part < parts; part++) {
      const piece = bytes.subarray(part * room, (part + 1) * room);
      const value = { clip, part, last: part === parts - 1, mime: blob.type, data: base64(piece) };
      if (!this.#publish(this.channels[3].ch, value, entry)) break;
    }
  }

  destroy() {
    if (this.#recording) {
      this.#recording.stopped = true;
      this.#release(this.#recording);
    }
    super.destroy();
  }
}

function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
