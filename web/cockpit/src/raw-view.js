// A raw view of any channel from the channel list: the newest frame's header and a preview of
// its payload (text when it is UTF-8, hex otherwise).
const utf8 = new TextDecoder('utf-8', { fatal: true });

export class RawView {
  constructor(channel, onClose) {
    this.el = document.createElement('section');
    this.el.className = 'raw-view';
    this.el.dataset.channel = channel.ch;
    const head = document.createElement('header');
    const title = document.createElement('h3');
    title.textContent = `raw: ${channel.ch}`;
    const close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Close';
    close.addEventListener('click', () => {
      this.destroy();
      onClose();
    });
    head.append(title, close);
    this.pre = document.createElement('pre');
    this.pre.textContent = 'waiting for a frame…';
    this.el.append(head, this.pre);
  }

  onFrame(frame) {
    let preview;
    try {
      preview = utf8.decode(frame.payload.subarray(0, 2048));
    } catch {
      preview = Array.from(frame.payload.subarray(0, 256), (b) => b.toString(16).padStart(2, '0')).join(' ');
    }
    this.pre.textContent = `${JSON.stringify(frame.header)}\n${frame.payload.length} bytes\n${preview}`;
  }

  destroy() {
    this.el.remove();
  }
}
