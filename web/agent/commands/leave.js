// `tether agent leave`: stops the state dir's sidecar (politely, then by signal).
import { lockHolder, pidAlive } from '../state.js';
import { fail, sleep } from '../cli/context.js';

/** Asks sidecar `pid` to stop, then signals it; fails naming the kill command if it lingers. */
export async function stopSidecar(rpc, pid) {
  await rpc('leave').catch(() => null);
  for (let i = 0; i < 100 && pidAlive(pid); i++) await sleep(50);
  if (pidAlive(pid)) {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 60 && pidAlive(pid); i++) await sleep(50);
  }
  if (pidAlive(pid)) fail(`sidecar pid ${pid} did not stop; stop it with \`kill ${pid}\``);
}

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
    await stopSidecar(rpc, holder);
    out({ ok: true, pid: holder }, `left; sidecar pid ${holder} stopped`);
  },
};
