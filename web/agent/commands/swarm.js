// `tether agent swarm ...`: file swarms (tether/swarm in the sidecar, chunks from every holder).
import path from 'node:path';
import { fail, sleep, usage } from '../cli/context.js';

/** One line per change: the file, then each peer's share of it. */
const progressLine = (p, have, bytes) =>
  `${p.name}: ${have}/${p.total} chunks, ${bytes}/${p.size} bytes (${Math.floor((100 * have) / Math.max(1, p.total))}%)` +
  Object.entries(p.peers ?? {})
    .map(([peer, c]) => ` | ${peer}: ${c.received ?? 0} B from, ${c.served ?? 0} B to`)
    .join('');

const FETCH_POLL_MS = 200;

/**
 * Follows a fetch the sidecar runs until it is done (resolves its status) or failed (a refusal
 * naming why), showing every status it polls to `onStatus`. The CLI and the MCP tool share it.
 */
export async function followFetch(call, fileId, onStatus) {
  for (;;) {
    const st = await call('swarm-status', { fileId });
    onStatus(st);
    if (st.state === 'done') return st;
    if (st.state === 'failed') fail(st.error);
    await sleep(FETCH_POLL_MS);
  }
}

export default {
  name: 'swarm',
  summary: 'file swarms: offer a file, fetch one from every peer that holds it',
  subcommands: [
    {
      name: 'offer',
      usage: 'PATH',
      summary: 'offer a file to the room (offered again after a sidecar restart)',
      async run({ pos, out, call, progress }) {
        const [arg] = pos;
        if (!arg) usage('swarm offer PATH: give the file to offer');
        progress(`hashing ${arg}...`);
        const r = await call('swarm-offer', { path: path.resolve(arg) });
        out(
          r,
          `offering ${r.name} (${r.size} bytes) as ${r.fileId}\nothers fetch it with: tether agent swarm fetch ${r.fileId}`,
        );
      },
    },
    {
      name: 'fetch',
      usage: 'FILE_ID [--to DIR]',
      summary: 'download a file by id, verified chunk by chunk (progress on stderr)',
      options: { to: { type: 'string', value: 'DIR', help: 'save into DIR (default: here)' } },
      async run({ v, pos, out, call, progress }) {
        const [arg] = pos;
        if (!arg) usage('swarm fetch FILE_ID [--to DIR]: give the file id from `swarm offer`');
        const to = path.resolve(v.to ?? '.');
        await call('swarm-fetch', { fileId: arg, to });
        let shown = '';
        const st = await followFetch(call, arg, ({ state, progress: p }) => {
          let line;
          if (!p) line = state === 'done' ? '' : `waiting for an offer of ${arg}...`;
          // A fetch faster than one poll still ends its progress display at 100%.
          else if (state === 'done') line = progressLine(p, p.total, p.size);
          else line = progressLine(p, p.have, p.bytes);
          if (line && line !== shown) progress(line);
          shown = line;
        });
        out(
          { ok: true, ...st.result, path: path.join(to, st.result.name) },
          `saved ${path.join(to, st.result.name)} (${st.result.size} bytes, sha256 verified${st.result.resumed ? ', resumed' : ''}${st.result.copiedFrom ? `; copied from ${st.result.copiedFrom}, which this sidecar already holds` : ''})`,
        );
      },
    },
    {
      name: 'list',
      usage: '',
      summary: 'files offered in the room (by us too): id, size, name, who offers it',
      async run({ out, call }) {
        const r = await call('swarm-list');
        out(
          r,
          Object.entries(r.offers)
            .map(
              ([id, o]) =>
                `${id}\t${o.size}\t${o.name}\t${[...(o.ours ? ['us'] : []), ...(o.offeredBy ?? [])].join(', ')}`,
            )
            .join('\n') || '(no offers: none seen in the room, and we offer none)',
        );
      },
    },
  ],
};
