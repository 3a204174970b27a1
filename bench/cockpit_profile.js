// Where the cockpit relay's time goes (bench/README.md § cockpit fan-out): runs the relay (or, for
// the fan-* modes, the bare fan-out server of the physical limit) and one
// bench/cockpit_bench_client.js case under the V8 inspector, samples both processes' CPU profiles
// over the measured stretch, and prints each one's CPU time (from /proc: JS thread and Deno's
// network threads together) and its top functions by self time. Deno 2.9 has no --cpu-prof, so
// the profiles come over the inspector protocol (Profiler.start / Profiler.stop).
// Run: node_modules/.bin/deno run -A --unstable-net bench/cockpit_profile.js [wt|ws|fan-oneshot|fan|fan-ws]
//        [bytes, default 1024] [seconds, default 4] [viewers, default 8]
// The .cpuprofile files go to /tmp (open them in Chrome DevTools for the call tree).
const [mode = 'wt', bytes = '1024', seconds = '4', viewers = '8'] = Deno.args;
const repo = new URL('../', import.meta.url).pathname;
const deno = Deno.execPath();
const TOP = 18;

function spawn(args) {
  const child = new Deno.Command(deno, {
    args: ['run', '-A', '--unstable-net', '--no-lock', '--inspect=127.0.0.1:0', ...args],
    cwd: repo,
    stdout: 'piped',
    stderr: 'piped',
    env: { DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  }).spawn();
  const text = { out: '', err: '' };
  const pump = async (stream, key) => {
    const dec = new TextDecoder();
    for await (const c of stream) text[key] += dec.decode(c);
  };
  pump(child.stdout, 'out');
  pump(child.stderr, 'err');
  const inspector = (async () => {
    for (let i = 0; i < 600; i++) {
      const m = text.err.match(/ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/);
      if (m) return m[0];
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no inspector URL from ${args[0]}:\n${text.err}`);
  })();
  return { child, text, inspector };
}

async function profiler(url) {
  const ws = new WebSocket(url);
  await new Promise((r, j) => {
    ws.onopen = r;
    ws.onerror = j;
  });
  let id = 0;
  const waiting = new Map();
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.id && waiting.has(m.id)) {
      waiting.get(m.id)(m.result);
      waiting.delete(m.id);
    }
  };
  const call = (method, params = {}) =>
    new Promise((r) => {
      waiting.set(++id, r);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  await call('Profiler.setSamplingInterval', { interval: 200 });
  await call('Runtime.runIfWaitingForDebugger');
  return { call, close: () => ws.close() };
}

function cpuTicks(pid) {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in 1/100 s
}

function summarize(name, profile, wallS, cpuS, fps) {
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
  let total = 0;
  for (const [nid, n] of counts) {
    const node = byId.get(nid);
    const cf = node.callFrame;
    const file = cf.url ? cf.url.replace(/^.*\/(web|bench|tests|build)\//, '$1/') : '';
    const key = `${cf.functionName || '(anonymous)'} ${file}${file ? `:${cf.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + n);
    total += n;
  }
  const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
  console.log(
    `\n${name}: CPU ${cpuS.toFixed(2)} s in ${wallS.toFixed(2)} s wall (${((100 * cpuS) / wallS).toFixed(0)}% of one core, all threads); ` +
      `JS thread busy ${((100 * (total - idle)) / total).toFixed(0)}% of samples; ` +
      `${((cpuS / (fps * wallS)) * 1e6).toFixed(0)} µs of CPU per robot frame`,
  );
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}

// The relay, or for the fan-* modes the bare fan-out server (bench/cockpit_raw_fanout.js).
const raw = mode.startsWith('fan') || mode === 'echo';
const relay = spawn(raw ? ['bench/cockpit_raw_fanout.js'] : ['web/host/relay.js', '--port', '0']);
const relayProf = await profiler(await relay.inspector);
const ready = raw
  ? /raw fan-out ready: (\d+) ([0-9a-f]+) (\d+)/
  : /tether relay ready: (http:\/\/127\.0\.0\.1:\d+)/;
let target;
for (let i = 0; i < 600 && !target; i++) {
  const m = relay.text.out.match(ready);
  target = m && (raw ? m.slice(1, 4).join(':') : m[1]);
  if (!target) await new Promise((r) => setTimeout(r, 50));
}
if (!target) throw new Error(`the server did not start:\n${relay.text.out}\n${relay.text.err}`);
// The client runs past the profiled stretch, which starts when it says it is running.
const clientSeconds = String(Number(seconds) + 3);
const client = spawn(['bench/cockpit_bench_client.js', target, mode, bytes, clientSeconds, viewers]);
const clientProf = await profiler(await client.inspector);
for (let i = 0; i < 1200 && !client.text.err.includes('bench client: running'); i++)
  await new Promise((r) => setTimeout(r, 50));
await new Promise((r) => setTimeout(r, 500)); // past the first window's ramp
const t0 = performance.now();
const c0 = [cpuTicks(relay.child.pid), cpuTicks(client.child.pid)];
await Promise.all([relayProf.call('Profiler.start'), clientProf.call('Profiler.start')]);
await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
const c1 = [cpuTicks(relay.child.pid), cpuTicks(client.child.pid)];
const wallS = (performance.now() - t0) / 1000;
const [rp, cp] = await Promise.all([
  relayProf.call('Profiler.stop'),
  clientProf.call('Profiler.stop'),
]);
for (const [name, p] of [
  [raw ? 'server' : 'relay', rp.profile],
  ['client', cp.profile],
])
  Deno.writeTextFileSync(`/tmp/cockpit-${mode}-${bytes}-${name}.cpuprofile`, JSON.stringify(p));
clientProf.close(); // Deno.exit waits while an inspector session is attached
const ended = await Promise.race([
  client.child.status.then(() => true),
  new Promise((r) => setTimeout(() => r(false), 30_000)),
]);
if (!ended) {
  client.child.kill('SIGKILL');
  console.error(`the client did not finish:\n${client.text.out}\n${client.text.err}`);
}
const result = JSON.parse(client.text.out.trim().split('\n').at(-1) || '{"fps":0}');
console.log(`case ${mode} ${bytes} B x ${viewers} viewers: ${JSON.stringify(result)}`);
summarize(raw ? 'server (bench/cockpit_raw_fanout.js)' : 'relay (web/host/relay.js)', rp.profile, wallS, (c1[0] - c0[0]) / 100, result.fps);
summarize('client (robot + viewers)', cp.profile, wallS, (c1[1] - c0[1]) / 100, result.fps);
relayProf.close();
relay.child.kill('SIGTERM');
await relay.child.status;
