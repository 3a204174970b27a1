// In-process A/B of the bus receive path of two trees (bench/README.md § bus, round 4): each tree's
// web/glue/bus.js with its own build/wasm/tether.wasm, in one process, fed the same texts (a
// distinct id per message, as a real stream has), in alternating rounds of ROUND_MS measured in
// CPU time, best of N, beside JSON.parse of the same texts. Prints ns per message.
//   node bench/bus-ab.mjs <treeA> <treeB> [rounds=15] [chat,ack,command 4 KiB]
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { envelopeText as mk } from './lib/bus-envelopes.mjs';

const [treeA, treeB] = process.argv.slice(2, 4);
if (!treeA || !treeB) throw new Error('usage: node bench/bus-ab.mjs <treeA> <treeB> [rounds]');
const ROUNDS = Number(process.argv[4] ?? 15);
const ROUND_MS = 40;
const N = 4096; // distinct texts, cycled

async function side(tree) {
  const { loadBus } = await import(pathToFileURL(`${tree}/web/glue/bus.js`).href);
  const api = await loadBus({ wasmBinary: fs.readFileSync(`${tree}/build/wasm/tether.wasm`) });
  const handlers = [];
  let delivered = 0;
  api.createBus({
    self: { streamId: 'me', role: 'agent', name: 'Me', instanceId: 'i' },
    transport: {
      openPeers: () => ['peer-origin'],
      send: () => true,
      subscribe(h) {
        handlers.push(h);
        return () => {};
      },
    },
    message: () => delivered++,
  });
  return { receive: (t) => handlers[0].text('peer-origin', t), delivered: () => delivered };
}

const env4k = Object.fromEntries(
  Array.from({ length: 90 }, (_, k) => [`KEY_${k}`, 'v'.repeat(36)]),
);
const sets = {
  chat: (i) => mk('chat', null, { text: 'build finished, 3 warnings; see the log' }, i),
  ack: (i) => mk('ack', 'me', { messageId: 'm-unknown', ok: true }, i),
  'command 4 KiB': (i) => mk('command', 'me', { run: 'make test', env: env4k }, i),
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
// ns of CPU time per call over one round.
function round(fn, texts) {
  let k = 0;
  let n = 0;
  const c0 = cpuMs();
  const w0 = performance.now();
  do {
    for (let i = 0; i < 64; i++) fn(texts[k++ % N]);
    n += 64;
  } while (performance.now() - w0 < ROUND_MS);
  return ((cpuMs() - c0) * 1e6) / n;
}

const a = await side(treeA);
const b = await side(treeB);
const parse = (t) => JSON.parse(t);
const names = process.argv[5] ? process.argv[5].split(',') : Object.keys(sets);
for (const name of names) {
  const texts = Array.from({ length: N }, (_, i) => sets[name](i));
  for (let i = 0; i < 2000; i++)
    (a.receive(texts[i % N]), b.receive(texts[i % N]), parse(texts[i % N]));
  let bestA = Infinity;
  let bestB = Infinity;
  let bestParse = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    bestA = Math.min(bestA, round(a.receive, texts));
    bestB = Math.min(bestB, round(b.receive, texts));
    bestParse = Math.min(bestParse, round(parse, texts));
  }
  const f = (x) => x.toFixed(0).padStart(6);
  console.log(
    `${name.padEnd(14)} A ${f(bestA)} ns  B ${f(bestB)} ns  A/B ${(bestA / bestB).toFixed(2)}  ` +
      `JSON.parse ${f(bestParse)} ns: /A ${(bestParse / bestA).toFixed(2)}  /B ${(bestParse / bestB).toFixed(2)}`,
  );
}
if (a.delivered() === 0 || b.delivered() === 0) throw new Error('bus-ab: nothing was delivered');
