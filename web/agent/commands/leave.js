// `tether agent leave`: stops the state dir's sidecar (politely, then by signal).
import { lockHolder, pidAlive } from '../state.js';
import { fail, sleep } from '../cli/context.js';

export default {
  name: 'leave',
  usage: '',
  summary: 'stop the sidecar (mail on disk stays)',
  async run({ dir, out, rpc }) {
    const holder = lockHolder(dir);
    if (holder === null) {
      out({ ok: true, running: false }, `no sidecar runs for ${dir}`);
      return;
    }
    await rpc('leave').catch(() => null);
    for (let i = 0; i < 100 && pidAlive(holder); i++) await sleep(50);
    if (pidAlive(holder)) {
      process.kill(holder, 'SIGTERM');
      for (let i = 0; i < 60 && pidAlive(holder); i++) await sleep(50);
    }
    if (pidAlive(holder))
      fail(`sidecar pid ${holder} did not stop; stop it with \`kill ${holder}\``);
    out({ ok: true, pid: holder }, `left; sidecar pid ${holder} stopped`);
  },
};
