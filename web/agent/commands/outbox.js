// `tether agent outbox`: the direct messages waiting in outbox/ for their peer, and dropping them
// (a typo'd peer name, work nobody will take). With a sidecar running, drops happen inside it, so
// a message is either sent or dropped, never both; without one, on the state dir.
import { ensureDirs } from '../store.js';
import { lockHolder } from '../state.js';
import { dropQueued, queuedRecords } from '../sidecar/outbox.js';
import { fail, usage } from '../cli/context.js';
import { iso } from '../cli/format.js';

const PREVIEW_CHARS = 60;

function preview(env) {
  const p = env.payload;
  const t = typeof p?.text === 'string' ? p.text : JSON.stringify(p);
  return t.length > PREVIEW_CHARS ? `${t.slice(0, PREVIEW_CHARS - 1)}…` : t;
}

const PEER = { type: 'string', value: 'P', help: "only P's messages" };

export default {
  name: 'outbox',
  summary: 'direct messages waiting for their peer, and dropping them',
  defaultSub: 'list',
  subcommands: [
    {
      name: 'list',
      usage: '[--peer P]',
      summary: 'what waits in the outbox, oldest first',
      options: { peer: PEER },
      run({ dir, v, out, needBus }) {
        needBus(); // records are checked by the bus core
        const items = queuedRecords(ensureDirs(dir))
          .filter((q) => v.peer === undefined || q.rec.to === v.peer)
          .map(({ rec }) => ({
            id: rec.id,
            to: rec.to,
            type: rec.type,
            topic: rec.envelope.topic,
            queuedAt: rec.queuedAt,
            preview: preview(rec.envelope),
          }));
        out(
          { ok: true, queued: items },
          items
            .map(
              (q) =>
                `${q.id}\t${q.to}\t${q.type}${q.topic ? ` #${q.topic}` : ''}\t${iso(q.queuedAt)}\t${q.preview}`,
            )
            .join('\n') || '(nothing queued)',
        );
      },
    },
    {
      name: 'drop',
      usage: 'ID... | --peer P',
      summary: 'remove queued messages by id, or all of one peer’s (they are never sent)',
      options: { peer: { ...PEER, help: 'every message queued for P' } },
      async run({ dir, v, pos, out, needBus, rpc }) {
        needBus();
        if (!pos.length && v.peer === undefined)
          usage('outbox drop: give the ids to drop (see `tether agent outbox`), or --peer P');
        if (pos.length && v.peer !== undefined)
          usage('outbox drop: give ids or --peer P, not both');
        const what = { ids: pos, peer: v.peer };
        const r =
          lockHolder(dir) !== null
            ? await rpc('outbox-drop', what)
            : dropQueued(ensureDirs(dir), what);
        if (!r.ok) fail(r.error);
        out(
          { ok: true, dropped: r.dropped },
          `dropped ${r.dropped.length} queued message(s)${v.peer !== undefined ? ` for ${v.peer}` : ''}: they will not be sent`,
        );
      },
    },
  ],
};
