// `tether agent notify`: unread, queued and handoff counts from the state dir (no sidecar needed).
import fs from 'node:fs';
import path from 'node:path';
import { ensureDirs, listRecords, readRecord } from '../store.js';
import { lockHolder, readJson } from '../state.js';

export function countState(dir) {
  const d = ensureDirs(dir);
  let unread = 0;
  let malformedInbox = 0;
  const handoffsIn = [];
  for (const n of listRecords(d.inbox)) {
    const r = readRecord(d.inbox, n, 'inbox');
    if (!r) malformedInbox++;
    else {
      unread++;
      if (r.envelope.type === 'handoff') handoffsIn.push(r.envelope.id);
    }
  }
  const queuedBy = {};
  let queued = 0;
  let malformedOutbox = 0;
  for (const n of listRecords(d.outbox)) {
    const r = readRecord(d.outbox, n, 'outbox');
    if (!r) malformedOutbox++;
    else {
      queued++;
      queuedBy[r.to] = (queuedBy[r.to] ?? 0) + 1;
    }
  }
  const handoffs = { pending: 0, stored: 0, expired: 0 };
  for (const n of fs.readdirSync(d.handoffsOut)) {
    const r = n.endsWith('.json') ? readJson(path.join(d.handoffsOut, n)) : null;
    if (r && r.kind === 'handoff-sent' && r.state in handoffs) handoffs[r.state]++;
  }
  return {
    ok: true,
    unread,
    unreadHandoffs: handoffsIn.length,
    queued,
    queuedBy,
    malformed: { inbox: malformedInbox, outbox: malformedOutbox },
    handoffs,
    sidecar: lockHolder(dir),
  };
}

export default {
  name: 'notify',
  usage: '',
  summary: 'unread, queued and handoff counts',
  async run({ dir, out, needBus }) {
    needBus();
    const r = countState(dir);
    const bad = r.malformed.inbox + r.malformed.outbox;
    out(
      r,
      `${r.unread} unread${r.unreadHandoffs ? ` (${r.unreadHandoffs} handoff)` : ''}, ${r.queued} queued${
        r.queued
          ? ` (${Object.entries(r.queuedBy)
              .map(([p, n]) => `${p}: ${n}`)
              .join(', ')})`
          : ''
      }; handoffs sent: ${r.handoffs.pending} pending, ${r.handoffs.stored} stored, ${r.handoffs.expired} expired${bad ? `; ${bad} malformed record(s) skipped` : ''}${r.sidecar ? '' : '; no sidecar running'}`,
    );
  },
};
