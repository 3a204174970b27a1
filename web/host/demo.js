// `make demo` in one process tree: starts the relay, waits for its status line, starts the demo
// robot against it, and prints the URL to open. Ctrl-C stops both children (by PID).
// Run: deno run --unstable-net --allow-net=127.0.0.1 --allow-read --allow-write=/tmp
//        --allow-run --allow-env web/host/demo.js [--port 7780]
const port = Deno.args[0] === '--port' ? Deno.args[1] : '7780';
const here = new URL('.', import.meta.url).pathname;
const perms = ['--no-lock', '--unstable-net', '--allow-net=127.0.0.1', '--allow-read', '--allow-write=/tmp', '--allow-run=openssl', '--allow-env'];
const children = [];

function start(script, args) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ['run', ...perms, `${here}${script}`, ...args],
    stdout: 'piped',
    stderr: 'inherit',
  }).spawn();
  children.push(child);
  return child;
}

async function waitFor(child, pattern) {
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  for (;;) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`exited before printing ${pattern}:\n${text}`);
    text += value;
    Deno.stdout.writeSync(new TextEncoder().encode(value));
    const m = text.match(pattern);
    if (m) {
      // Keep echoing the child's output.
      (async () => {
        for (;;) {
          const { value: more, done: end } = await lines.read();
          if (end) return;
          Deno.stdout.writeSync(new TextEncoder().encode(more));
        }
      })();
      return m;
    }
  }
}

function stopAll() {
  for (const c of children) {
    try {
      c.kill('SIGTERM');
    } catch {}
  }
}
for (const sig of ['SIGINT', 'SIGTERM']) Deno.addSignalListener(sig, () => (stopAll(), Deno.exit(0)));

try {
  const relay = start('relay.js', ['--port', port]);
  const [, url] = await waitFor(relay, /tether relay ready: (http:\/\/\S+)/);
  const robot = start('demo-robot.js', ['--relay', url]);
  await waitFor(robot, /welcomed by/);
  console.log(`\ntether demo: open ${url} (relay stats at ${url}/api/stats); Ctrl-C stops it\n`);
  await Promise.race(children.map((c) => c.status));
  console.error('tether demo: a child exited; stopping');
} catch (e) {
  console.error(`tether demo: ${e.message}`);
}
stopAll();
Deno.exit(1);
