// `tether agent prune-archive`: bounded archive retention (agent-bus-and-swarm.md § Remaining
// reliability priorities, 2): a preview unless --apply, and --apply only with an explicit limit.
import fs from 'node:fs';
import path from 'node:path';
import { archiveEntries, ensureDirs, listRecords, planPrune } from '../store.js';
import { readJson } from '../state.js';
import { fail } from '../cli/context.js';
import { parseCount, parseDuration } from '../cli/values.js';

export default {
  name: 'prune-archive',
  usage: '[--older-than 7d] [--keep N] [--apply]',
  summary: 'delete read mail from the archive (a preview unless --apply)',
  options: {
    'older-than': {
      type: 'string',
      value: 'DURATION',
      help: 'records received longer ago than this',
    },
    keep: { type: 'string', value: 'N', help: 'keep the newest N records' },
    apply: { type: 'boolean', help: 'delete (without it: only say what would go)' },
  },
  async run({ dir, v, out, needBus }) {
    needBus();
    const d = ensureDirs(dir);
    const olderThanMs =
      v['older-than'] !== undefined ? parseDuration('--older-than', v['older-than']) : undefined;
    const keep = v.keep !== undefined ? parseCount('--keep', v.keep, 10_000_000) : undefined;
    const entries = archiveEntries(d);
    const malformed = listRecords(d.archive).length - entries.length;
    const plan = planPrune(entries, { olderThanMs, keep });
    const bytes = plan.reduce((s, e) => s + e.size, 0);
    const limits = olderThanMs !== undefined || keep !== undefined;
    // Receiver dedup markers are only needed while their sender may still retry, i.e. until the
    // handoff's expiresAt; a day after that they are garbage (kept a day for clock skew).
    const now = Date.now();
    const staleMarkers = fs.readdirSync(d.handoffsIn).filter((n) => {
      const m = n.endsWith('.json') ? readJson(path.join(d.handoffsIn, n)) : null;
      return (
        m?.kind === 'handoff-received' &&
        typeof m.expiresAt === 'number' &&
        m.expiresAt + 86_400_000 < now
      );
    });
    if (!v.apply) {
      const first = entries[0];
      out(
        {
          ok: true,
          preview: true,
          archived: entries.length,
          malformed,
          wouldDelete: plan.length,
          bytes,
          names: plan.map((e) => e.name),
          staleHandoffMarkers: staleMarkers.length,
        },
        `${entries.length} archived record(s)${first ? `, oldest ${new Date(first.receivedAt).toISOString()}` : ''}; ` +
          (limits
            ? `would delete ${plan.length} (${bytes} bytes). Add --apply to delete them.`
            : 'preview only: pass --older-than 7d and/or --keep N, then --apply.') +
          (malformed ? ` ${malformed} malformed record(s) are left alone.` : '') +
          ' Deleting receipts deletes that evidence.',
      );
      return;
    }
    if (!limits)
      fail(
        'prune-archive --apply needs a limit: --older-than DURATION and/or --keep N (run without --apply to preview)',
      );
    let deleted = 0;
    for (const e of plan) {
      try {
        fs.unlinkSync(path.join(d.archive, e.name));
        deleted++;
      } catch {}
    }
    let markers = 0;
    for (const n of staleMarkers) {
      try {
        fs.unlinkSync(path.join(d.handoffsIn, n));
        markers++;
      } catch {}
    }
    out(
      {
        ok: true,
        preview: false,
        deleted,
        bytes,
        kept: entries.length - deleted,
        malformed,
        handoffMarkers: markers,
      },
      `deleted ${deleted} archived record(s) (${bytes} bytes); ${entries.length - deleted} kept${markers ? `; ${markers} expired handoff marker(s) removed` : ''}`,
    );
  },
};
