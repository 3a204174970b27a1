// The robot side of the teleop safety chain (cockpit-wire-v7-notes.md § Teleop): a twist from the
// current lease moves the robot; `stop`, `teleop_stop`, session loss and a watchdog without twists
// (watchdogMs, default 300) zero it; a generation floor permanently rejects anything older than
// the newest lease, so a released holder's late datagrams can never move the robot.
// Pure logic with time passed in, so it is tested without a clock (tests/node/cockpit-teleop.test.mjs).
export class TeleopSafety {
  constructor({ watchdogMs = 300 } = {}) {
    this.watchdogMs = watchdogMs;
    this.floor = 0; // lowest generation still accepted
    this.active = 0; // the lease being obeyed, 0 for none
    this.cmd = { vx: 0, vy: 0, wz: 0 };
    this.lastTwistMs = -Infinity;
  }

  #zero() {
    this.cmd = { vx: 0, vy: 0, wz: 0 };
  }

  /** Handles a relay datagram; returns true when it changed the command. */
  handle(msg, nowMs) {
    const gen = Number.isSafeInteger(msg.gen) ? msg.gen : -1;
    switch (msg.t) {
      case 'teleop_start':
        if (gen < this.floor) return false;
        this.floor = gen;
        this.active = gen;
        this.#zero();
        return true;
      case 'teleop_stop':
        if (gen < this.floor) return false;
        // Everything of this lease and before is over for good.
        this.floor = gen + 1;
        this.active = 0;
        this.#zero();
        return true;
      case 'twist':
        if (gen < this.floor || gen !== this.active) return false;
        this.cmd = { vx: msg.vx, vy: msg.vy, wz: msg.wz };
        this.lastTwistMs = nowMs;
        return true;
      case 'stop':
        if (gen < this.floor) return false;
        this.#zero();
        return true;
      default:
        return false;
    }
  }

  /** The session to the relay was lost: stop, and forget the lease. */
  sessionLost() {
    this.active = 0;
    this.#zero();
  }

  /** The command to apply now (the watchdog zeroes a stale one). */
  command(nowMs) {
    if (nowMs - this.lastTwistMs > this.watchdogMs) this.#zero();
    return this.cmd;
  }
}
