// Who this agent has ever seen in its room (seen-peers.json in the state dir, kept across
// restarts), so `send` to a name nobody has used, a typo, can say so instead of queueing in
// silence. Bounded: the names seen longest ago are forgotten first.
import path from 'node:path';
import { readJson, writeJson } from '../state.js';

export const SEEN_MAX = 10_000;

export class SeenPeers {
  /** @param {{dir: string, max?: number}} o */
  constructor({ dir, max = SEEN_MAX }) {
    this.file = path.join(dir, 'seen-peers.json');
    this.max = max;
    const saved = readJson(this.file);
    this.lastSeen = new Map(
      saved && typeof saved === 'object' && !Array.isArray(saved)
        ? Object.entries(saved).filter(([, t]) => Number.isFinite(t))
        : [],
    );
  }

  /** The roster as the transport reports it; saved when it names someone new. */
  note(ids) {
    let added = false;
    const now = Date.now();
    for (const id of ids) {
      if (!this.lastSeen.has(id)) added = true;
      this.lastSeen.delete(id); // re-inserted last: Map order is oldest-seen first
      this.lastSeen.set(id, now);
    }
    while (this.lastSeen.size > this.max) this.lastSeen.delete(this.lastSeen.keys().next().value);
    if (added) writeJson(this.file, Object.fromEntries(this.lastSeen));
  }

  has(id) {
    return this.lastSeen.has(id);
  }

  names() {
    return [...this.lastSeen.keys()];
  }
}
