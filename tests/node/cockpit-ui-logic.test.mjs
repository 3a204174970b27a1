// The cockpit's pure UI logic, in Node: message paths for plots, log entries' level and text,
// layout tree edits and the layout link (truncated, oversized and hostile links refused by name).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMessagePath, valueAt } from '../../web/cockpit/src/panels/message-path.js';
import { levelOf, logEntry } from '../../web/cockpit/src/panels/log-entry.js';
import { addPanel, removePanel, setShares, swapPanels } from '../../web/cockpit/src/layout-edit.js';
import { MAX_SHARED_CHARS, decodeShared, encodeShared } from '../../web/cockpit/src/layout-link.js';

test('message paths: the longest channel prefix, then keys and indexes', () => {
  const chans = ['pose', 'stats', 'a', 'a.b'];
  assert.deepEqual(parseMessagePath('pose.x', chans), { ok: true, ch: 'pose', steps: ['x'] });
  assert.deepEqual(parseMessagePath(' stats.teleop.vx ', chans), {
    ok: true,
    ch: 'stats',
    steps: ['teleop', 'vx'],
  });
  assert.deepEqual(parseMessagePath('a.b[0].c', chans), { ok: true, ch: 'a.b', steps: [0, 'c'] });
  assert.deepEqual(parseMessagePath('a["odd key"][2]', chans), {
    ok: true,
    ch: 'a',
    steps: ['odd key', 2],
  });
  assert.match(
    parseMessagePath('nope.x', chans).error,
    /names no JSON channel; start with one of pose, stats/,
  );
  assert.match(parseMessagePath('pose', chans).error, /name a field, e\.g\. pose\.x/);
  assert.match(parseMessagePath('pose.x[', chans).error, /cannot read the path at "\["/);
  assert.match(parseMessagePath('pose..x', chans).error, /cannot read the path/);
  assert.equal(parseMessagePath('posex', chans).ok, false);
});

test('values at a path: finite numbers and booleans; anything else is no point', () => {
  const v = { a: { b: [{ c: 3.5 }, { c: 'x' }] }, t: true, n: null, inf: Infinity };
  assert.equal(valueAt(v, ['a', 'b', 0, 'c']), 3.5);
  assert.equal(valueAt(v, ['a', 'b', 1, 'c']), null);
  assert.equal(valueAt(v, ['a', 'b', 5, 'c']), null);
  assert.equal(valueAt(v, ['t']), 1);
  assert.equal(valueAt(v, ['n', 'x']), null);
  assert.equal(valueAt(v, ['inf']), null);
  assert.equal(valueAt(7, ['x']), null);
});

test('log entries: level names and numbers (ROS 2, Foxglove), text fields, the time', () => {
  assert.equal(levelOf('WARNING'), 'warn');
  assert.equal(levelOf('err'), 'error');
  assert.equal(levelOf(40), 'error'); // ROS 2 ERROR
  assert.equal(levelOf(2), 'info'); // Foxglove INFO
  assert.equal(levelOf(5), 'fatal');
  assert.equal(levelOf(99), 'fatal');
  assert.equal(levelOf('chatty'), 'info');
  assert.equal(levelOf(NaN), 'info');
  assert.deepEqual(logEntry({ level: 'warn', msg: 'hot', ts: 5, name: 'motor' }, 1), {
    level: 'warn',
    text: 'hot',
    ts: 5,
    source: 'motor',
  });
  assert.deepEqual(logEntry({ severity: 30, message: 'm' }, 2), {
    level: 'warn',
    text: 'm',
    ts: 2,
    source: '',
  });
  assert.deepEqual(logEntry({ n: 1, level: 'debug', ts: 3 }, 0), {
    level: 'debug',
    text: '{"n":1}',
    ts: 3,
    source: '',
  });
  assert.deepEqual(logEntry([1, 2], 4), { level: 'info', text: '[1,2]', ts: 4, source: '' });
  assert.deepEqual(logEntry('plain', 4), { level: 'info', text: '"plain"', ts: 4, source: '' });
});

const demo = {
  row: [{ col: ['cam', 'drive'], shares: [3, 1] }, 'map', { col: ['talk', 'health'] }],
  shares: [2, 3, 1],
};

test('layout edits: remove collapses, swap, add, shares', () => {
  assert.deepEqual(removePanel(demo, 'drive'), {
    row: ['cam', 'map', { col: ['talk', 'health'], shares: [1, 1] }],
    shares: [2, 3, 1],
  });
  assert.deepEqual(removePanel('only', 'only'), null);
  const same = removePanel(demo, 'absent');
  assert.deepEqual(same.row[0], demo.row[0]);
  assert.deepEqual(same.shares, demo.shares);
  assert.deepEqual(swapPanels(demo, 'map', 'cam').row[0].col, ['map', 'drive']);
  assert.equal(swapPanels(demo, 'map', 'cam').row[1], 'cam');
  assert.deepEqual(addPanel(demo, 'log-1'), { row: [...demo.row, 'log-1'], shares: [2, 3, 1, 2] });
  assert.deepEqual(addPanel('cam', 'x'), { row: ['cam', 'x'], shares: [3, 1] });
  // A manifest whose main tab places nothing has a null layout.
  assert.equal(removePanel(null, 'x'), null);
  assert.equal(swapPanels(null, 'a', 'b'), null);
  assert.equal(addPanel(null, 'x'), 'x');
  assert.deepEqual(setShares(demo, [0], [1, 1]).row[0], { col: ['cam', 'drive'], shares: [1, 1] });
  assert.deepEqual(setShares(demo, [], [0, 2, 1]).shares, [0.1, 2, 1]); // never zero
});

test('layout links: round trip; cut off, oversized and hostile links are refused by name', () => {
  const custom = {
    layout: demo,
    added: [{ id: 'log-1', kind: 'event-log', title: 'log ✓', channels: ['log'] }],
  };
  const text = encodeShared(custom);
  assert.match(text, /^[\w-]+$/);
  assert.deepEqual(decodeShared(text), { ok: true, custom });
  assert.match(
    decodeShared(text.slice(0, text.length >> 1)).error,
    /not readable \(a cut-off link\?\)/,
  );
  assert.match(
    decodeShared('x'.repeat(MAX_SHARED_CHARS + 1)).error,
    /over 8192; share a smaller one/,
  );
  assert.match(decodeShared(encodeShared({ nope: 1 })).error, /has no layout in it/);
  assert.match(decodeShared('!!!').error, /not readable/);
  assert.match(
    decodeShared(Buffer.from([0xff, 0xfe, 0x22]).toString('base64url')).error,
    /not readable/,
  );
});

test('fleet link verdict: stalled past the frame age bound, degraded past loss or rtt, else good', async () => {
  const { linkVerdict, STALLED_AFTER_MS, DEGRADED_LOSS_PCT, DEGRADED_RTT_MS } =
    await import('../../web/cockpit/src/fleet.js');
  const ok = { frameAgeMs: 100, lossPct: 0, rttMs: 20 };
  assert.equal(linkVerdict(ok), 'good');
  assert.equal(linkVerdict({ ...ok, frameAgeMs: null }), 'unknown');
  assert.equal(linkVerdict({ ...ok, frameAgeMs: STALLED_AFTER_MS }), 'good');
  assert.equal(linkVerdict({ ...ok, frameAgeMs: STALLED_AFTER_MS + 1 }), 'stalled');
  assert.equal(linkVerdict({ ...ok, lossPct: DEGRADED_LOSS_PCT + 0.1 }), 'degraded');
  assert.equal(linkVerdict({ ...ok, rttMs: DEGRADED_RTT_MS + 1 }), 'degraded');
  assert.equal(linkVerdict({ ...ok, rttMs: null }), 'good');
  // A stall outranks loss: no frames is worse than some lost.
  assert.equal(linkVerdict({ frameAgeMs: 5000, lossPct: 50, rttMs: 900 }), 'stalled');
});
