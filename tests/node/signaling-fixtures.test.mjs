// The signaling negotiation's golden traces (fixtures/bus/signaling.json, written by the C++ core)
// replayed core by core against the WASM build through web/glue/signaling.js on a manual clock.
// The native suite replays the same file (tests/native/bus/test_signaling.cpp).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { createSignaling } from '../../web/glue/signaling.js';

const f = JSON.parse(readFileSync(new URL('../../fixtures/bus/signaling.json', import.meta.url)));

function replay(trace, where) {
  let clock = 0;
  const timers = new Map();
  let next = 1;
  let actions = [];
  let events = [];
  const s = createSignaling(
    { selfId: trace.options.selfId, seed: trace.options.seed },
    { perform: (a) => actions.push(a), event: (e) => events.push(e) },
    {
      now: () => clock,
      setTimer: (fn, ms) => {
        timers.set(next, { fn, at: clock + ms });
        return next++;
      },
      clearTimer: (id) => timers.delete(id),
    },
  );
  trace.steps.forEach((step, k) => {
    const i = step.input;
    const at = `${where} step ${k}: ${JSON.stringify(i)}`;
    clock = i.now;
    actions = [];
    events = [];
    switch (i.in) {
      case 'welcome':
        s.welcome(i.members);
        break;
      case 'roster':
        s.roster(i.members);
        break;
      case 'down':
        s.signalingDown();
        break;
      case 'signal':
        s.signal(i.from, i.data);
        break;
      case 'description':
        s.description(i.peer, i.gen, i.sdp);
        break;
      case 'remote-set':
        s.remoteSet(i.peer, i.gen);
        break;
      case 'failed':
        s.failed(i.peer, i.gen);
        break;
      case 'local-candidate':
        s.localCandidate(i.peer, i.gen, i.candidate);
        break;
      case 'channels-open':
        s.channelsOpen(i.peer, i.gen);
        break;
      case 'channel-closed':
        s.channelClosed(i.peer, i.gen);
        break;
      case 'state':
        s.connectionState(i.peer, i.gen, i.state);
        break;
      case 'rebuild':
        s.rebuild(i.peer);
        break;
      case 'close':
        s.close();
        break;
      case 'timeout':
        for (const [id, t] of [...timers]) {
          if (t.at <= clock) {
            timers.delete(id);
            t.fn();
          }
        }
        break;
      default:
        assert.fail(`unknown input ${i.in}`);
    }
    assert.deepEqual(actions, step.actions, at);
    assert.deepEqual(events, step.events, at);
    assert.equal(s.nextTimeout(), step.timeout, at);
  });
}

test('signaling fixtures: every trace replays step by step through the glue', () => {
  assert.ok(f.scenarios.length >= 6);
  let steps = 0;
  for (const sc of f.scenarios) {
    for (const t of sc.traces) {
      replay(t, `${sc.name}/${t.options.selfId}`);
      steps += t.steps.length;
    }
  }
  assert.ok(steps > 100);
});
