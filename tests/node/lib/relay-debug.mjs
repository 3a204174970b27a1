// Prints both records of one seed up to a step: node tests/node/lib/relay-debug.mjs SEED STEP
import * as reference from '@mmstack/mesh-protocol';
import * as ours from '@tether-rt/tether/relay';
import { play, scenario } from './relay-scenarios.mjs';
const [seed, upto] = process.argv.slice(2).map(Number);
const script = scenario(seed);
script.steps = script.steps.slice(0, upto + 1);
for (const [i, s] of script.steps.entries()) console.log(i, JSON.stringify(s));
const a = JSON.parse((await play(ours, script)).at(-1));
const b = JSON.parse((await play(reference, script)).at(-1));
for (const [k, v] of Object.entries({ ours: a, reference: b })) {
  console.log(`== ${k}`);
  for (const [conn, log] of v.logs) {
    console.log(` conn ${conn}`);
    for (const m of log) console.log('   ', JSON.stringify(m).slice(0, 300));
  }
  for (const c of v.calls) console.log('  call', JSON.stringify(c).slice(0, 300));
}
