// The room golden vectors (fixtures/room/, written by the C++ core) against the WASM build through
// the glue the endpoints and transports use: tickets (web/edge/tickets.js, and the MAC checked
// again with node:crypto as an independent oracle), room member sessions (web/glue/room-member.js
// on a manual clock) and a relay transcript (tether/relay createRelay). The native suite replays
// the same files (tests/native/room/test_room_fixtures.cpp).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import * as reference from '@mmstack/mesh-protocol';
import { createRelay } from '@tether-rt/tether/relay';
import { mintTicket, verifyTicket } from '../../web/edge/tickets.js';
import { createRoomMember } from '../../web/glue/room-member.js';

const fixture = (name) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/room/${name}`, import.meta.url)));

test('room fixtures: tickets mint to the pinned bytes, carry a real HMAC-SHA256, verify as pinned', async () => {
  const f = fixture('tickets.json');
  let minted = 0;
  for (const m of f.mint) {
    const claims = {
      writer: m.writer,
      kind: m.kind,
      room: m.room,
      ttlSeconds: m.ttlSeconds,
      nowMs: m.nowMs,
    };
    if (m.ticket) {
      assert.equal(await mintTicket(m.secret, claims), m.ticket);
      const [v, payload, mac] = m.ticket.split('.');
      const expected = createHmac('sha256', m.secret).update(`${v}.${payload}`).digest('base64url');
      assert.equal(mac, expected, 'the MAC is HMAC-SHA256(secret, "t1." + payload)');
      assert.deepEqual(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), {
        w: m.writer,
        k: m.kind,
        r: m.room,
        exp: Math.floor(m.nowMs / 1000) + Math.ceil(m.ttlSeconds),
      });
      minted++;
    } else {
      await assert.rejects(
        mintTicket(m.secret, claims),
        (e) => e.message === `tether tickets: ${m.error}`,
      );
    }
  }
  assert.ok(minted >= 4);
  for (const v of f.verify) {
    const got = await verifyTicket(v.secret, v.ticket, { room: v.room, nowMs: v.nowMs });
    assert.deepEqual(got, v.result, v.name);
  }
});

// The fields an event of its kind carries (as the fixture writes them).
function canonical(e) {
  switch (e.kind) {
    case 'joined':
      return { kind: e.kind, members: e.members, reconnect: e.reconnect };
    case 'roster':
      return { kind: e.kind, members: e.members };
    case 'member':
      return { kind: e.kind, origin: e.origin, again: e.again };
    case 'text':
    case 'signal':
      return { kind: e.kind, origin: e.origin, text: e.text };
    case 'down':
      return { kind: e.kind };
    case 'refused': {
      const out = { kind: e.kind, reason: e.reason, text: e.text, fatal: e.fatal };
      if (e.expected !== undefined) out.expected = e.expected;
      if (e.writer !== undefined) out.writer = e.writer;
      return out;
    }
    default:
      return { kind: e.kind, origin: e.origin };
  }
}

test('room fixtures: every member session replays step by step through the glue', () => {
  const f = fixture('member.json');
  assert.ok(f.sessions.length >= 3);
  for (const s of f.sessions) {
    let clock = 0;
    const timers = new Map();
    let nextTimer = 1;
    let actions = [];
    let events = [];
    const m = createRoomMember(
      s.options,
      {
        dial: (attempt) => actions.push({ kind: 'dial', attempt }),
        transmit: (frame) => actions.push({ kind: 'transmit', text: frame.text() }),
        hangUp: () => actions.push({ kind: 'hang-up' }),
        event: (e) => events.push(canonical(e)),
      },
      {
        now: () => clock,
        setTimer: (fn, ms) => {
          timers.set(nextTimer, { fn, at: clock + ms });
          return nextTimer++;
        },
        clearTimer: (id) => timers.delete(id),
      },
    );
    s.steps.forEach((step, k) => {
      const where = `${s.name} step ${k}: ${JSON.stringify(step.input)}`;
      const i = step.input;
      clock = i.now;
      actions = [];
      events = [];
      let result = null;
      if (i.in === 'start') m.start();
      else if (i.in === 'open') m.linkOpen();
      else if (i.in === 'message') m.linkMessage(i.text);
      else if (i.in === 'closed') m.linkClosed();
      else if (i.in === 'close') m.close();
      else if (i.in === 'send') result = m.sendText(i.peer, i.text, i.buffered);
      else if (i.in === 'signal') result = m.sendSignal(i.to, i.data);
      else if (i.in === 'timeout') {
        for (const [id, t] of [...timers]) {
          if (t.at <= clock) {
            timers.delete(id);
            t.fn();
          }
        }
      }
      assert.deepEqual(result, step.result ?? null, where);
      assert.deepEqual(actions, step.actions, where);
      assert.deepEqual(events, step.events, where);
      assert.equal(m.nextTimeout(), step.timeout, where);
    });
  }
});

// Replays a relay transcript (room "doc") through tether/relay's JSON-text path.
function replayTranscript(f) {
  let clock = 0;
  let out = [];
  let events = [];
  const relay = createRelay({
    policyVersion: f.options.policyVersion,
    journalLimit: f.options.journalLimit,
    readAckBytes: f.options.readAckBytes,
    now: () => clock,
    onCommit: (room, env) => {
      out.push({ commit: env }); // returns nothing: the echo goes out at once
    },
    onJoin: (room, ctx, origin) => events.push({ kind: 'join', text: origin }),
    onReject: (room, ctx, reason) => events.push({ kind: 'reject', reason }),
    onDrop: (room, env, reason) => events.push({ kind: 'drop', reason, text: env }),
    onViolation: (room, v) => events.push({ kind: 'violation', text: v }),
  });
  const conns = [];
  const instance = () => relay.room('doc')?.instance ?? '';
  // The observers get objects (JSON.parse of the client's text, as the reference's do); compared
  // as JSON, where an Infinity reads as null.
  const asJson = (v) => JSON.parse(JSON.stringify(v));
  f.steps.forEach((step, k) => {
    const i = step.input;
    const where = `step ${k}: ${JSON.stringify(i)}`;
    out = [];
    events = [];
    let result = null;
    const before = instance();
    if (i.connect !== undefined) {
      const idx = conns.length;
      conns.push(
        relay.connectText(
          {
            send: (text) => out.push({ to: idx, text }),
            close: () => out.push({ close: idx }),
            read: (bytes) => out.push({ read: idx, bytes }),
          },
          i.room ? { writer: i.connect, room: i.room } : { writer: i.connect },
        ),
      );
    } else if (i.disconnect !== undefined) {
      conns[i.disconnect].disconnect();
    } else {
      clock = i.now;
      result = conns[i.from].receive(i.text.replaceAll('$I', before))?.reason ?? null;
    }
    const inst = instance() || before;
    const norm = (s) => (inst ? s.replaceAll(inst, '$I') : s);
    const want = step.sent.map((x) =>
      x.commit !== undefined ? { commit: JSON.parse(x.commit) } : x,
    );
    const got = out.map((x) =>
      x.commit !== undefined
        ? { commit: JSON.parse(norm(JSON.stringify(x.commit))) }
        : x.text
          ? { ...x, text: norm(x.text) }
          : x,
    );
    assert.deepEqual(got, want, where);
    const wantEvents = step.events.map((e) =>
      e.kind === 'drop' || e.kind === 'violation' ? { ...e, text: asJson(JSON.parse(e.text)) } : e,
    );
    const gotEvents = events.map((e) =>
      e.kind === 'drop' ? { ...e, text: JSON.parse(norm(JSON.stringify(e.text))) } : e,
    );
    assert.deepEqual(gotEvents, wantEvents, where);
    // The core names errors with dashes (its receive_error_name); the fixture pins them.
    assert.equal(result, step.result ?? null, where);
  });
  return f.steps.length;
}

test('room fixtures: the relay transcript replays message for message through tether/relay', () => {
  assert.ok(replayTranscript(fixture('messages.json')) > 15);
});

test('room fixtures: read acknowledgements replay through tether/relay', () => {
  assert.ok(replayTranscript(fixture('read_ack.json')) > 10);
});

test("room fixtures: numbers beyond a double's range replay through tether/relay", () => {
  assert.ok(replayTranscript(fixture('numbers.json')) > 10);
});

// Differential: the reference relay behind its README's adapter (JSON.parse in, JSON.stringify
// out) sends the same messages, compared as values, for the numbers transcript: it reads such a
// number as Infinity and writes null, as tether does.
test('room fixtures: the reference relay sends the same values for numbers beyond range', () => {
  const f = fixture('numbers.json');
  const relay = reference.createRelay({
    policyVersion: f.options.policyVersion,
    journalLimit: f.options.journalLimit,
  });
  const conns = [];
  let out = [];
  const instance = () => relay.room('doc')?.instance ?? '';
  const values = (sent, inst) =>
    sent
      .filter((x) => x.commit === undefined)
      .map((x) =>
        x.text === undefined
          ? x
          : { to: x.to, msg: JSON.parse(inst ? x.text.replaceAll(inst, '$I') : x.text) },
      );
  f.steps.forEach((step, k) => {
    const i = step.input;
    out = [];
    const before = instance();
    if (i.connect !== undefined) {
      const idx = conns.length;
      const socket = {
        send: (m) => out.push({ to: idx, text: JSON.stringify(m) }),
        close: () => out.push({ close: idx }),
      };
      conns.push(relay.connect(socket, { writer: i.connect }));
    } else if (i.disconnect !== undefined) {
      conns[i.disconnect].disconnect();
    } else {
      conns[i.from].receive(JSON.parse(i.text.replaceAll('$I', before)));
    }
    const inst = instance() || before;
    assert.deepEqual(values(out, inst), values(step.sent, ''), `step ${k}: ${JSON.stringify(i)}`);
  });
});
