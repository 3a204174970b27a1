// chat: send text to the robot's agent and read its replies (four channels, in order: text tx,
// chat rx, agent state rx, audio tx). Sending publishes a value on the text channel; the relay
// answers pub_ack or pub_nack (cockpit-wire-v7-notes.md § Publishing).
import { Panel } from './panel.js';

export class ChatPanel extends Panel {
  #log = document.createElement('ol');
  #state = document.createElement('pre');
  #form = document.createElement('form');
  #input = document.createElement('input');
  #seq = 0;

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
    this.#form.className = 'chat-form';
    this.#form.append(this.#input, send);
    this.#form.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = this.#input.value.trim();
      if (!text) return;
      const id = `${Date.now().toString(36)}-${++this.#seq}`;
      const ok = this.ctx.publish(this.channels[0].ch, { text }, id);
      this.#append('me', text, ok ? 'sending' : 'not sent');
      if (ok) this.#input.value = '';
    });
    this.body.append(this.#log, this.#state, this.#form);
  }

  render(ch, dec) {
    if (ch === this.channels[1]?.ch) {
      const m = dec.value;
      this.#append(m.role ?? m.from ?? 'robot', String(m.text ?? m.message ?? JSON.stringify(m)));
    } else if (ch === this.channels[2]?.ch) {
      this.#state.textContent = JSON.stringify(dec.value, null, 1);
    }
  }

  #append(who, text, note) {
    const li = document.createElement('li');
    li.className = `chat-${who === 'me' ? 'me' : 'them'}`;
    li.textContent = `${who}: ${text}${note ? ` (${note})` : ''}`;
    this.#log.append(li);
    while (this.#log.childElementCount > 200) this.#log.firstElementChild.remove();
    li.scrollIntoView?.({ block: 'nearest' });
  }
}
