// `make demo` in one process tree: starts the local SFU (web/sfu/server.js, on Node), the relay
// brokering WebRTC video through it (--rtc-file), waits for each status line, starts the demo
// robot with its JPEG and its WebRTC camera against the relay, and prints the URL to open. Ctrl-C
// stops every child (by PID). --no-webrtc leaves the SFU and the WebRTC camera out.
// Run: deno run --unstable-net --allow-net=127.0.0.1 --allow-read --allow-write=/tmp
//        --allow-run --allow-env web/host/demo.js [--port 7780] [--no-webrtc]
const args = [...Deno.args];
const portAt = args.indexOf('--port');
const port = portAt >= 0 ? args[portAt + 1] : '7780';
const webrtc = !args.includes('--no-webrtc');
const here = new URL('.', import.meta.url).pathname;
const perms = [
  '--no-lock',
  '--unstable-net',
  '--allow-net=127.0.0.1',
  '--allow-read',
  '--allow-write=/tmp',
  '--allow-run=openssl,ffmpeg',
  '--allow-sys=networkInterfaces',
  '--allow-env',
];
const children = [];
const rtcFile = `/tmp/tether-demo-rtc-${Deno.pid}.json`;

function spawn(command, args) {
  const child = new Deno.Command(command, { args, stdout: 'piped', stderr: 'inherit' }).spawn();
  children.push(child);
  return child;
}
const start = (script, args) =>
  spawn(Deno.execPath(), ['run', ...perms, `${here}${script}`, ...args]);

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
  try {
    Deno.removeSync(rtcFile);
  } catch {}
}
for (const sig of ['SIGINT', 'SIGTERM'])
  Deno.addSignalListener(sig, () => (stopAll(), Deno.exit(0)));

try {
  const relayArgs = ['--port', port];
  if (webrtc) {
    // The SFU makes up its app's credentials and writes them in the relay's --rtc-file shape.
    const sfu = spawn('node', [
      `${here}../sfu/server.js`,
      '--port',
      '0',
      '--rtc-file-out',
      rtcFile,
    ]);
    await waitFor(sfu, /tether sfu ready: (http:\/\/\S+)/);
    relayArgs.push('--rtc-file', rtcFile);
  }
  const relay = start('relay.js', relayArgs);
  const [, url] = await waitFor(relay, /tether relay ready: (http:\/\/\S+)/);
  const robot = start('demo-robot.js', ['--relay', url, ...(webrtc ? ['--webrtc'] : [])]);
  await waitFor(robot, /welcomed by/);
  console.log(`\ntether demo: open ${url} (relay stats at ${url}/api/stats); Ctrl-C stops it\n`);
  await Promise.race(children.map((c) => c.status));
  console.error('tether demo: a child exited; stopping');
} catch (e) {
  console.error(`tether demo: ${e.message}`);
}
stopAll();
Deno.exit(1);
