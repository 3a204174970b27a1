// `tether agent receipt PEER REQUEST_ID`: what PEER reported about one of our requests (acks and
// command responses in inbox and archive, a handoff's stored receipt). Consumes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { ensureDirs, listRecords, readRecord } from '../store.js';
import { readJson } from '../state.js';
import { usage } from '../cli/context.js';

export default {
  name: 'receipt',
  usage: 'PEER REQUEST_ID',
  summary: 'acks and command responses for REQUEST_ID (consumes nothing)',
  async run({ dir, pos, out, needBus }) {
    const api = needBus();
    const [peer, id] = pos;
    if (!peer || !id) usage('receipt PEER REQUEST_ID: both are needed');
    const d = ensureDirs(dir);
    const found = [];
    for (const [where, folder] of [
      ['inbox', d.inbox],
      ['archive', d.archive],
    ]) {
      for (const n of listRecords(folder)) {
        const r = readRecord(folder, n, 'inbox');
        if (!r) continue;
        // The bus core decides whether an envelope reports on the request (ack/command_response).
        const m = api.matchReceipt(r.envelope, { requestId: id, peer });
        if (!m) continue;
        found.push({
          where,
          type: m.kind,
          id: r.envelope.id,
          ts: r.envelope.ts,
          failed: !m.ok,
          payload: r.envelope.payload,
        });
      }
    }
    // A handoff's "stored" receipt is kept on its sender record.
    for (const n of fs.readdirSync(d.handoffsOut)) {
      const r = n.endsWith('.json') ? readJson(path.join(d.handoffsOut, n)) : null;
      if (r?.kind === 'handoff-sent' && r.envelope?.id === id && r.envelope?.to === peer) {
        found.push({
          where: 'handoffs',
          type: 'handoff',
          id,
          state: r.state,
          storedAt: r.storedAt ?? null,
          failed: r.state === 'expired',
        });
      }
    }
    out(
      { ok: true, peer, requestId: id, receipts: found },
      found.length
        ? found
            .map(
              (f) =>
                `${f.where}: ${f.type} ${f.state ?? (f.failed ? 'FAILED' : 'ok')} ${JSON.stringify(f.payload ?? {})}`,
            )
            .join('\n')
        : `no receipt from '${peer}' for ${id} yet`,
    );
  },
};
