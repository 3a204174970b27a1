// `tether agent pull PEER SHARE PATH`: one file from a peer's share over tether/bus's one-to-one
// transfer (the sidecar's side is web/agent/pull.js); progress on stderr, never overwrites.
import path from 'node:path';
import { fail, sleep, usage } from '../cli/context.js';

export default {
  name: 'pull',
  usage: 'PEER SHARE PATH [--to DIR]',
  summary: "one file from PEER's share (never overwrites; progress on stderr)",
  options: { to: { type: 'string', value: 'DIR', help: 'save into DIR (default: here)' } },
  async run({ v, pos, out, call, progress }) {
    const [peer, share, rel] = pos;
    if (!peer || !share || !rel)
      usage('pull PEER SHARE PATH [--to DIR]: name the peer, its share and the file');
    const to = path.resolve(v.to ?? '.');
    const r = await call('pull', { peer, share, path: rel, to });
    let shown = '';
    const line = (received, size) =>
      `pull ${share}/${rel}: ${received} / ${size} bytes (${Math.floor((100 * received) / Math.max(1, size))}%)`;
    for (;;) {
      const st = await call('pull-status', { id: r.pull });
      if (st.state === 'done') {
        // A pull faster than one poll still ends its progress display at 100%.
        const last = line(st.size, st.size);
        if (last !== shown) progress(last);
        return out(st, `saved ${st.savedPath} (${st.size} bytes, sha256 ${st.sha256})`);
      }
      if (st.state === 'failed') fail(st.error);
      const now = st.size
        ? line(st.received, st.size)
        : `pull ${share}/${rel}: waiting for ${peer}`;
      if (now !== shown) progress(now);
      shown = now;
      await sleep(200);
    }
  },
};
