// `tether agent receipt PEER REQUEST_ID`: what PEER reported about one of our requests (acks and
// command responses in inbox and archive, a handoff's stored receipt). Consumes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { ensureDirs, listRecords, readRecord } from '../store.js';
import { readJson } from '../state.js';
import { usage } from '../cli/context.js';
import { iso } from '../cli/format.js';

export default {
  name: 'receipt',
  usage: 'PEER REQUEST_ID',
  summary: 'acks and command responses for REQUEST_ID (consumes nothing)',
  async run({ dir, pos, out, needBus }) {
    const api = needBus();
    const [peer, id] = pos;
    if (!peer || !id) usage('receipt PEER REQUEST_ID: both are needed');
    const found = findReceipts(dir, api, peer, id);
    out(
      { ok: true, peer, requestId: id, receipts: found },
      found.length
        ? found.map((f) => describe(f, peer)).join('\n')
        : `no receipt from '${peer}' for ${id} yet`,
    );
  },
};

/**
 * What `peer` reported about our request `id`, from the state dir (consumes nothing): acks and
 * command responses in inbox and archive (the bus core `api` decides what reports on it), and a
 * handoff's stored receipt.
 */
export function findReceipts(dir, api, peer, id) {
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
        expiredAt: r.expiredAt ?? null,
        expiresAt: r.envelope.payload?.expiresAt ?? null,
        sends: r.sends ?? 0,
        failed: r.state === 'expired',
      });
    }
  }
  return found;
}

/** One receipt as a sentence: what reported, when, and what it said. */
function describe(f, peer) {
  if (f.type === 'handoff') {
    const when =
      f.state === 'stored'
        ? `stored by ${peer} at ${iso(f.storedAt)}`
        : f.state === 'expired'
          ? `EXPIRED unconfirmed at ${iso(f.expiredAt ?? f.expiresAt)}`
          : `pending: not confirmed yet (retried until ${iso(f.expiresAt)}; \`tether agent handoffs\` counts the sends)`;
    return `handoff ${f.id}: ${when}`;
  }
  const { messageId, ok, error, ...rest } =
    f.payload && typeof f.payload === 'object' ? f.payload : {};
  const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
  return `${f.type} ${f.id} from ${peer} at ${iso(f.ts)} (${f.where}): ${f.failed ? `FAILED${error !== undefined ? `: ${typeof error === 'string' ? error : JSON.stringify(error)}` : ''}` : 'ok'}${extra}`;
}
