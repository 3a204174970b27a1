// The WebRTC benches run inside a private network namespace with only `lo` (TOOLCHAIN.md: WebRTC
// pairs nothing but loopback there). `runInNetns(import.meta.url, main)` re-runs the calling file
// under `unshare -n` and exits with its code, or, already inside, runs `main`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export async function runInNetns(fileUrl, main) {
  if (process.env.TETHER_IN_NETNS === '1') return main();
  const file = fileURLToPath(fileUrl);
  const child = spawn(
    'unshare',
    ['-n', 'sh', '-c', `ip link set lo up && exec "${process.execPath}" "$0"`, file],
    { env: { ...process.env, TETHER_IN_NETNS: '1' }, stdio: 'inherit' },
  );
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
