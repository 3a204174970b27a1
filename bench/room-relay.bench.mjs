// Room relay throughput and memory, tether/relay against the reference @mmstack/mesh-protocol
// relay, in one Node process with JSON text in and JSON text out (the room-relay spec;
// docs/design.md rule 6). Each run: a room hydrated with K registers, M members connected, the journal
// filled to journalLimit (1000) so every commit trims, then a timed stream of envelopes from the
// members, each writing one key and citing the key's previous write (steady supersession and
// collection). A second workload writes without citing anything (concurrent writers that never
// saw each other's writes), so siblings pile up per key, up to one per writer. Prints envelopes/s,
// output messages/s, bytes per retained register, ours/reference.
//   node bench/room-relay.bench.mjs [--quick]
import v8 from 'node:v8';
import vm from 'node:vm';

import * as reference from '@mmstack/mesh-protocol';
import * as ours from '@tether-rt/tether/relay';
import { atLeast, atMost } from './lib/targets.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const QUICK = process.argv.includes('--quick');
const JOURNAL = 1000;
const INSTANCE = 'bench-instance';

function snapshot(keys) {
  const registers = [];
  for (let i = 0; i < keys; i++) {
    registers.push({
      path: ['k', i],
      siblings: [
        {
          kind: 'set',
          writer: 'seed',
          origin: 'seed',
          hlc: { p: i + 1, l: 0 },
          epoch: 0,
          value: i,
        },
      ],
      water: {},
    });
  }
  return {
    seq: keys,
    instance: INSTANCE,
    schemaVersion: 0,
    registers,
    ranges: { seed: [[1, keys]] },
    settled: { seed: { p: keys, l: 0 } },
  };
}

// Envelope texts for `count` writes spread over the members, every one citing the last write at its
// key (cited) or nothing (uncited).
function stream(members, keys, count, startClock, cited) {
  const last = new Map();
  const versions = new Array(members).fill(0);
  const out = [];
  let clock = startClock;
  for (let n = 0; n < count; n++) {
    const m = n % members;
    const key = (n * 7919) % keys;
    const prev = last.get(key) ?? { origin: 'seed', hlc: { p: key + 1, l: 0 } };
    const hlc = { p: ++clock, l: 0 };
    const origin = `origin-${m}`;
    const env = {
      proto: 3,
      instance: INSTANCE,
      origin,
      writer: `writer-${m}`,
      version: ++versions[m],
      hlc,
      policyVersion: 0,
      ops: [
        {
          kind: 'set',
          path: ['k', key],
          next: { n, text: 'lorem ipsum' },
          prev: null,
          cites: cited ? [prev] : [],
          epoch: 0,
        },
      ],
    };
    last.set(key, { origin, hlc });
    out.push({ member: m, text: JSON.stringify({ t: 'env', room: 'bench', env }) });
  }
  return out;
}

function run(lib, isOurs, members, keys, budgetMs, maxEnvelopes, cited = true) {
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const relay = lib.createRelay({ journalLimit: JOURNAL });
  relay.hydrate('bench', snapshot(keys));
  let sent = 0;
  const conns = [];
  for (let m = 0; m < members; m++) {
    const ctx = { writer: `writer-${m}` };
    const hello = JSON.stringify({
      t: 'hello',
      room: 'bench',
      origin: `origin-${m}`,
      proto: 3,
      policyVersion: 0,
      seq: keys,
    });
    if (isOurs) {
      const c = relay.connectText(
        {
          send: () => {
            sent++;
          },
        },
        ctx,
      );
      c.receive(hello);
      conns.push((text) => c.receive(text));
    } else {
      const c = relay.connect(
        {
          send: (msg) => {
            // The reference hands the socket an object; its serialisation is part of the send.
            const _wire = JSON.stringify(msg);
            sent++;
          },
        },
        ctx,
      );
      c.receive(JSON.parse(hello));
      conns.push((text) => c.receive(JSON.parse(text)));
    }
  }
  const all = stream(members, keys, JOURNAL + maxEnvelopes, keys + 10, cited);
  for (let i = 0; i < JOURNAL; i++) conns[all[i].member](all[i].text); // fill the journal
  if (relay.room('bench').journal !== JOURNAL) throw new Error('journal did not fill');
  sent = 0;
  let done = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (done < maxEnvelopes) {
    const e = all[JOURNAL + done];
    conns[e.member](e.text);
    done++;
    if ((done & 15) === 0 && (elapsed = performance.now() - t0) > budgetMs) break;
  }
  elapsed = performance.now() - t0;
  const seq = relay.room('bench').seq;
  if (seq !== keys + JOURNAL + done)
    throw new Error(`expected seq ${keys + JOURNAL + done}, got ${seq}`);
  let registers;
  let regBytes;
  if (isOurs) {
    ({ registers, registerBytes: regBytes } = relay.stats());
  } else {
    let snap;
    const probe = relay.connect({ send: (m) => (snap ??= m) }, { writer: 'probe' });
    probe.receive({ t: 'hello', room: 'bench', origin: 'probe', proto: 3, policyVersion: 0 });
    registers = snap.registers.filter(
      (r) => r.siblings.length || Object.keys(r.water).length,
    ).length;
    probe.disconnect();
    snap = null;
    all.length = 0;
    gc();
    regBytes = process.memoryUsage().heapUsed - heapBefore;
  }
  return {
    envPerSec: (done / elapsed) * 1000,
    msgPerSec: (sent / elapsed) * 1000,
    usPerEnv: (elapsed * 1000) / done,
    bytesPerReg: regBytes / registers,
    registers,
    done,
    relay,
  };
}

const configs = [];
for (const members of [8, 64])
  for (const keys of QUICK ? [1000, 100000] : [1000, 10000, 100000])
    configs.push({ members, keys, cited: true });
for (const members of [8, 64]) configs.push({ members, keys: 1000, cited: false });
// Warm both up first: V8 compiles WASM with its baseline tier and optimizes hot functions later,
// so whichever configuration ran first would otherwise pay for compilation.
run(ours, true, 8, 1000, QUICK ? 300 : 1000, 20000).relay = null;
run(reference, false, 8, 1000, QUICK ? 300 : 1000, 2000).relay = null;
// The machine is shared: each relay runs REPEATS times per configuration, alternating, and the
// best run counts (the run least disturbed by other processes).
const REPEATS = QUICK ? 1 : 3;
const best = (a, b) => (!a || b.envPerSec > a.envPerSec ? b : a);
const rows = [];
for (const { members, keys, cited } of configs) {
  let mine;
  let theirs;
  for (let i = 0; i < REPEATS; i++) {
    const m = run(ours, true, members, keys, QUICK ? 400 : 800, QUICK ? 10000 : 30000, cited);
    m.relay = null;
    mine = best(mine, m);
    const t = run(reference, false, members, keys, QUICK ? 400 : 800, 20000, cited);
    t.relay = null;
    theirs = best(theirs, t);
  }
  rows.push({ members, keys, cited, mine, theirs });
}
const pad = (s, n) => String(s).padStart(n);
const fmt = (x) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));
console.log(
  `room relay: journalLimit ${JOURNAL}, JSON text in and out, one op per envelope; best of ${REPEATS}`,
);
console.log(
  [
    'writes',
    'members',
    'keys',
    'ours env/s',
    'ref env/s',
    'ratio',
    'ours msg/s',
    'ref msg/s',
    'ours B/reg',
    'ref B/reg',
    'ours µs/env',
  ]
    .map((h, i) => pad(h, i === 0 ? 8 : i < 3 ? 7 : 12))
    .join(' '),
);
for (const { members, keys, cited, mine, theirs } of rows) {
  console.log(
    [
      pad(cited ? 'cited' : 'uncited', 8),
      pad(members, 7),
      pad(keys, 7),
      pad(fmt(mine.envPerSec), 12),
      pad(fmt(theirs.envPerSec), 12),
      pad((mine.envPerSec / theirs.envPerSec).toFixed(1) + '×', 12),
      pad(fmt(mine.msgPerSec), 12),
      pad(fmt(theirs.msgPerSec), 12),
      pad(fmt(mine.bytesPerReg), 12),
      pad(fmt(theirs.bytesPerReg), 12),
      pad(mine.usPerEnv.toFixed(2), 12),
    ].join(' '),
  );
}
for (const members of [8, 64]) {
  const r = rows.filter((x) => x.members === members && x.cited);
  const flat = r.at(-1).mine.usPerEnv / r[0].mine.usPerEnv;
  console.log(
    `${members} members: ours per-envelope cost ${r.at(-1).keys} keys / ${r[0].keys} keys = ${flat.toFixed(2)}× (target ≤ 1.5×)`,
  );
  atMost(
    `room relay ${members} members: cost per envelope, ${r.at(-1).keys} / ${r[0].keys} keys`,
    flat,
    1.5,
  );
}
for (const r of rows.filter((x) => x.keys === 1000)) {
  const ratio = r.mine.envPerSec / r.theirs.envPerSec;
  console.log(
    `${r.cited ? 'cited' : 'uncited'} writes, ${r.members} members, 1k keys: ours/reference = ${ratio.toFixed(1)}× (target ≥ 20×: ${ratio >= 20 ? 'met' : 'MISSED'})`,
  );
  atLeast(
    `room relay ${r.cited ? 'cited' : 'uncited'}, ${r.members} members, 1k keys: ours / ref`,
    ratio,
    20,
  );
}
