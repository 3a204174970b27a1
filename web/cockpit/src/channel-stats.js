// Per-channel rate and span-based loss (cockpit-wire-v7-notes.md § Delivery reminders:
// loss = maxSeq - minSeq + 1 - received), over a sliding window so a reconnect or a robot
// restart ages out instead of poisoning the figure forever.

const WINDOW_MS = 5000;

export class ChannelStats {
  #arrivals = []; // [timeMs, seq]

  record(seq, nowMs) {
    this.#arrivals.push([nowMs, seq]);
    this.#trim(nowMs);
  }

  #trim(nowMs) {
    let drop = 0;
    while (drop < this.#arrivals.length && nowMs - this.#arrivals[drop][0] > WINDOW_MS) drop++;
    if (drop) this.#arrivals.splice(0, drop);
  }

  /** @returns {{rateHz: number, received: number, lost: number, lossPct: number}} */
  snapshot(nowMs) {
    this.#trim(nowMs);
    const n = this.#arrivals.length;
    if (n === 0) return { rateHz: 0, received: 0, lost: 0, lossPct: 0 };
    let min = Infinity;
    let max = -Infinity;
    const seen = new Set();
    for (const [, seq] of this.#arrivals) {
      if (seq < min) min = seq;
      if (seq > max) max = seq;
      seen.add(seq);
    }
    const span = max - min + 1;
    const lost = Math.max(0, span - seen.size);
    const elapsed = Math.max(1, nowMs - this.#arrivals[0][0]);
    return {
      rateHz: n > 1 ? ((n - 1) * 1000) / elapsed : 0,
      received: seen.size,
      lost,
      lossPct: span > 0 ? (100 * lost) / span : 0,
    };
  }
}
