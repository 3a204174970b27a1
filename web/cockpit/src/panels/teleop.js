// teleop: WASD drive, Q/E strafe, Shift boost, Space e-stop, over the lease
// (cockpit-wire-v7-notes.md § Teleop). The panel turns keys into a command and hands it to the
// viewer core, which resends it well inside the robot's watchdog while it stands and stops when
// the lease or the link goes (src/cockpit/viewer_session.hpp). The panel's part of the safety
// chain: the command is zeroed on key release, Esc, window blur, a hidden tab, unmount and
// disconnect. A gamepad (gamepad.js) drives only while its deadman is held; releasing it or
// losing the pad zeroes the command the same way.
import { Panel } from './panel.js';
import { GAMEPAD_HELP, readGamepad } from './gamepad.js';

const KEYS = {
  w: [1, 0, 0],
  s: [-1, 0, 0],
  q: [0, 1, 0],
  e: [0, -1, 0],
  a: [0, 0, 1],
  d: [0, 0, -1],
};

export class TeleopPanel extends Panel {
  #held = new Set();
  #boost = false;
  #moving = false;
  #status = document.createElement('p');
  #button = document.createElement('button');
  #readout = document.createElement('output');
  #unbind = [];
  #pad = document.createElement('p');
  #padDriving = false;
  #padLast = '';
  #raf = 0;

  constructor(ctx) {
    super(ctx);
    this.maxV = Number(this.spec.params?.maxV ?? 0.5);
    this.maxW = Number(this.spec.params?.maxW ?? 1.0);
    this.#button.type = 'button';
    this.#button.className = 'lease-button';
    this.#button.addEventListener('click', () => this.#toggleLease());
    this.#status.className = 'lease-status';
    this.#status.setAttribute('role', 'status');
    this.#readout.className = 'twist-readout';
    const help = document.createElement('p');
    help.className = 'hint';
    help.textContent =
      'W/S forward, A/D turn, Q/E strafe, Shift boost, Space stop, Esc release keys';
    const padHelp = document.createElement('p');
    padHelp.className = 'hint';
    padHelp.textContent = GAMEPAD_HELP;
    this.#pad.className = 'gamepad-status';
    this.el.dataset.gamepad = '';
    this.body.append(this.#button, this.#status, this.#readout, help, padHelp, this.#pad);
    const poll = () => {
      this.#pollGamepad();
      this.#raf = requestAnimationFrame(poll);
    };
    this.#raf = requestAnimationFrame(poll);
    this.#bind(window, 'keydown', (e) => this.#onKey(e, true));
    this.#bind(window, 'keyup', (e) => this.#onKey(e, false));
    this.#bind(window, 'blur', () => this.zero('blur'));
    this.#bind(document, 'visibilitychange', () => document.hidden && this.zero('hidden'));
    this.refresh();
  }

  #bind(target, type, fn) {
    target.addEventListener(type, fn);
    this.#unbind.push(() => target.removeEventListener(type, fn));
  }

  get #lease() {
    return this.ctx.session.state.teleop;
  }

  #toggleLease() {
    if (this.#lease === 'held' || this.#lease === 'requesting') {
      this.zero('release');
      this.ctx.session.teleopStop();
    } else {
      this.ctx.session.teleopStart();
    }
  }

  /** Called by the app on every session change. */
  refresh() {
    const lease = this.#lease;
    const linkOpen = this.ctx.session.state.link.state === 'open';
    if (!linkOpen || lease !== 'held') this.zero(linkOpen ? 'lease' : 'disconnect', false);
    this.#button.textContent =
      lease === 'held' || lease === 'requesting' ? 'Release control' : 'Take control';
    this.#button.disabled = !linkOpen;
    const err = this.ctx.session.state.lastError;
    this.#status.textContent =
      lease === 'held'
        ? 'You hold the teleop lease'
        : lease === 'requesting'
          ? 'Asking for the lease…'
          : lease === 'refused'
            ? `Lease held by another viewer${err?.message ? `: ${err.message}` : ''}`
            : 'Lease free';
    this.el.dataset.lease = lease;
  }

  #typing(e) {
    const t = e.target;
    return (
      t instanceof HTMLElement &&
      (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))
    );
  }

  #onKey(e, down) {
    if (this.#typing(e)) return;
    const key = e.key.toLowerCase();
    if (key === 'shift') {
      this.#boost = down;
      if (this.#moving) this.#send();
    }
    if (down && key === ' ') {
      e.preventDefault();
      this.estop();
      return;
    }
    if (down && key === 'escape') return this.zero('escape');
    if (!(key in KEYS)) return;
    if (this.#lease !== 'held') return;
    e.preventDefault();
    if (down) this.#held.add(key);
    else this.#held.delete(key);
    if (this.#held.size === 0) this.zero('release');
    else this.#send();
  }

  /** One reading per animation frame: drive while the deadman is held, zero when it is let go. */
  #pollGamepad() {
    const g = readGamepad();
    const state = !g ? 'none' : g.deadman ? 'deadman' : 'connected';
    if (this.el.dataset.gamepad !== state) {
      this.el.dataset.gamepad = state;
      this.#pad.textContent = !g
        ? 'No gamepad (press a button on one to connect it)'
        : `${g.id}: ${g.deadman ? 'deadman held, driving' : 'deadman released'}`;
    }
    if (!g || !g.deadman || this.#lease !== 'held' || document.hidden) {
      if (this.#padDriving) {
        this.#padDriving = false;
        this.#padLast = '';
        this.zero(g ? 'deadman' : 'gamepad');
      }
      return;
    }
    const gain = g.boost ? 2 : 1;
    const c = {
      vx: g.vx * this.maxV * gain,
      vy: g.vy * this.maxV * gain,
      wz: g.wz * this.maxW * gain,
    };
    const sig = `${c.vx},${c.vy},${c.wz}`;
    this.#padDriving = true;
    // The core repeats the command inside the watchdog; only a change is handed over.
    if (sig === this.#padLast) return;
    this.#padLast = sig;
    this.#twist(c.vx, c.vy, c.wz);
  }

  #command() {
    let [vx, vy, wz] = [0, 0, 0];
    for (const k of this.#held) {
      vx += KEYS[k][0];
      vy += KEYS[k][1];
      wz += KEYS[k][2];
    }
    const gain = this.#boost ? 2 : 1;
    return { vx: vx * this.maxV * gain, vy: vy * this.maxV * gain, wz: wz * this.maxW * gain };
  }

  #send() {
    const c = this.#command();
    this.#twist(c.vx, c.vy, c.wz);
  }

  #twist(vx, vy, wz) {
    if (!this.ctx.session.drive(vx, vy, wz)) return;
    this.#moving = vx !== 0 || vy !== 0 || wz !== 0;
    this.#readout.value = `vx ${vx.toFixed(2)}  vy ${vy.toFixed(2)}  wz ${wz.toFixed(2)}`;
    this.el.dataset.twist = `${vx},${vy},${wz}`;
  }

  /** Clears the keys and zeroes the command (the core sends one zero twist when it was moving). */
  zero(reason, send = true) {
    const wasMoving = this.#held.size > 0 || this.#moving;
    this.#held.clear();
    if (send && wasMoving && this.#lease === 'held') this.#twist(0, 0, 0);
    this.#moving = false;
    this.el.dataset.zeroedBy = reason;
  }

  estop() {
    this.zero('estop', false);
    this.ctx.session.estop();
    this.#readout.value = 'STOP';
    this.el.dataset.twist = '0,0,0';
  }

  destroy() {
    cancelAnimationFrame(this.#raf);
    this.zero('unmount');
    for (const u of this.#unbind) u();
    super.destroy();
  }
}
