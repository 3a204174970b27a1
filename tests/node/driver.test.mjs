// The one driver (web/glue/driver.js) against a small core that keeps the contract of
// src/common/drive.hpp: a send queue whose transport may refuse, events, and one deadline. The
// clock and timers are injected, so every step is deterministic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDriver } from '../../web/glue/driver.js';

// A core with a per-peer ordered backlog: pollAction offers the head; a refusal keeps it (and what
// follows) queued; an accepted send emits a 'sent' event. It wants a timeout at `deadline`.
function queueCore() {
  const backlog = [];
  const events = [];
  let offered = null;
  const core = {
    deadline: null,
    timeouts: [],
    send(text) {
      backlog.push(text);
    },
    handleResult(accepted) {
      const text = offered;
      offered = null;
      if (accepted) {
        backlog.shift();
        events.push({ sent: text });
      } else {
        core.blocked = true;
      }
    },
    blocked: false,
    pollAction() {
      if (offered !== null || core.blocked || backlog.length === 0) return null;
      offered = backlog[0];
      return { kind: 'transmit', text: offered };
    },
    pollEvent: () => events.shift() ?? null,
    pollTimeout: () => core.deadline,
    handleTimeout(now) {
      core.timeouts.push(now);
      core.deadline = null;
    },
  };
  return core;
}

function manualClock(start = 1000) {
  const clock = { t: start, timers: new Map(), next: 1, set: 0, cleared: 0 };
  clock.now = () => clock.t;
  clock.setTimer = (fn, ms) => {
    clock.set++;
    const id = clock.next++;
    clock.timers.set(id, { fn, at: clock.t + ms });
    return id;
  };
  clock.clearTimer = (id) => {
    clock.cleared++;
    clock.timers.delete(id);
  };
  clock.advance = (ms) => {
    clock.t += ms;
    for (const [id, { fn, at }] of [...clock.timers]) {
      if (at <= clock.t) {
        clock.timers.delete(id);
        fn();
      }
    }
  };
  return clock;
}

test('driver: drains actions in order, feeds synchronous results back, then delivers events', () => {
  const core = queueCore();
  const wire = [];
  const seen = [];
  let refuseNext = false;
  const driver = createDriver(core, {
    perform(a) {
      const accepted = !refuseNext;
      if (accepted) wire.push(a.text);
      // The transport answers at once; the answer is an input like any other.
      driver.input(() => core.handleResult(accepted));
    },
    event: (e) => seen.push(e.sent),
  });
  driver.input(() => {
    core.send('a');
    core.send('b');
    core.send('c');
  });
  assert.deepEqual(wire, ['a', 'b', 'c']);
  assert.deepEqual(seen, ['a', 'b', 'c']);

  // A refusal stops the flush exactly there: nothing after it is offered.
  refuseNext = true;
  driver.input(() => {
    core.send('d');
    core.send('e');
  });
  assert.deepEqual(wire, ['a', 'b', 'c']);
  refuseNext = false;
  driver.input(() => (core.blocked = false));
  assert.deepEqual(wire, ['a', 'b', 'c', 'd', 'e']);
});

test('driver: input from an event handler is drained in the same call, after what was pending', () => {
  const core = queueCore();
  const wire = [];
  const driver = createDriver(core, {
    perform(a) {
      wire.push(a.text);
      driver.input(() => core.handleResult(true));
    },
    event(e) {
      if (e.sent === 'ping') driver.input(() => core.send('pong'));
    },
  });
  driver.input(() => core.send('ping'));
  assert.deepEqual(wire, ['ping', 'pong']);
});

test('driver: one timer at the earliest deadline; later deadlines keep it, earlier ones move it', () => {
  const core = queueCore();
  const clock = manualClock();
  const driver = createDriver(core, { perform() {} }, clock);

  driver.input(() => (core.deadline = 1500));
  assert.equal(clock.timers.size, 1);
  driver.input(() => (core.deadline = 1800)); // later: the 1500 timer stays (waking early is harmless)
  assert.equal(clock.set, 1);
  assert.equal(clock.cleared, 0);
  driver.input(() => (core.deadline = 1200)); // earlier: moved
  assert.equal(clock.set, 2);
  assert.equal(clock.cleared, 1);
  assert.equal([...clock.timers.values()][0].at, 1200);

  clock.advance(199);
  assert.deepEqual(core.timeouts, []);
  clock.advance(1);
  assert.deepEqual(core.timeouts, [1200]);
  assert.equal(clock.timers.size, 0, 'the core cleared its deadline: no timer left');
});

test('driver: handleTimeout output is drained, and a timeout that sets a new deadline is rescheduled', () => {
  const core = queueCore();
  const clock = manualClock();
  const wire = [];
  const driver = createDriver(
    core,
    {
      perform(a) {
        wire.push(a.text);
        driver.input(() => core.handleResult(true));
      },
    },
    clock,
  );
  const handle = core.handleTimeout;
  core.handleTimeout = (now) => {
    handle(now);
    core.send(`retry@${now}`);
    if (core.timeouts.length < 3) core.deadline = now + 100;
  };
  driver.input(() => (core.deadline = 1100));
  clock.advance(100);
  clock.advance(100);
  clock.advance(100);
  clock.advance(100);
  assert.deepEqual(wire, ['retry@1100', 'retry@1200', 'retry@1300']);
  assert.equal(clock.timers.size, 0);
});

test('driver: close stops the timer; inputs after close still run and drain', () => {
  const core = queueCore();
  const clock = manualClock();
  const wire = [];
  const driver = createDriver(
    core,
    {
      perform(a) {
        wire.push(a.text);
        driver.input(() => core.handleResult(true));
      },
    },
    clock,
  );
  driver.input(() => (core.deadline = 1100));
  driver.close();
  assert.equal(driver.closed, true);
  assert.equal(clock.timers.size, 0);
  clock.advance(1000);
  assert.deepEqual(core.timeouts, []);
  driver.input(() => core.send('late'));
  assert.deepEqual(wire, ['late']);
  assert.equal(clock.timers.size, 0, 'a closed driver schedules nothing');
});

test('driver: a throwing host callback is reported and the next item still runs', () => {
  const core = queueCore();
  const errors = [];
  const wire = [];
  const driver = createDriver(
    core,
    {
      perform(a) {
        driver.input(() => core.handleResult(true));
        if (a.text === 'bad') throw new Error('socket gone');
        wire.push(a.text);
      },
      event(e) {
        if (e.sent === 'x') throw new Error('handler bug');
      },
    },
    { onError: (e, where) => errors.push(`${where}: ${e.message}`) },
  );
  driver.input(() => {
    core.send('bad');
    core.send('x');
    core.send('good');
  });
  assert.deepEqual(wire, ['x', 'good']);
  assert.deepEqual(errors, ['perform: socket gone', 'an event handler: handler bug']);
});

test('driver: a core that never settles is stopped and reported instead of hanging the process', () => {
  const errors = [];
  const core = { pollAction: () => ({ kind: 'again' }) };
  const driver = createDriver(
    core,
    { perform() {} },
    { maxItems: 1000, onError: (e) => errors.push(e.message) },
  );
  driver.drain();
  assert.equal(errors.length, 1);
  assert.match(errors[0], /1000 items without settling/);
});

test('driver: an input that throws still drains what it produced, then rethrows', () => {
  const core = queueCore();
  const wire = [];
  const driver = createDriver(core, {
    perform(a) {
      wire.push(a.text);
      driver.input(() => core.handleResult(true));
    },
  });
  assert.throws(
    () =>
      driver.input(() => {
        core.send('before');
        throw new Error('bad input');
      }),
    /bad input/,
  );
  assert.deepEqual(wire, ['before']);
});

test('driver: defer runs at once when idle, and after the drain in progress when called from perform', () => {
  // A core whose actions read its live state (as the room relay's commit does): every action
  // reports how many messages the core had taken in when it was carried out.
  const queue = [];
  let taken = 0;
  const core = {
    take(text) {
      taken++;
      queue.push(text);
    },
    pollAction: () => (queue.length ? { text: queue.shift() } : null),
  };
  const seen = [];
  let use = 'defer';
  const driver = createDriver(core, {
    perform(a) {
      seen.push(`${a.text}@${taken}`);
      // A socket that answers synchronously from send: an input unrelated to this action.
      if (a.text === 'a') driver[use](() => core.take('reply'));
    },
  });
  driver.input(() => {
    core.take('a');
    core.take('b');
  });
  assert.deepEqual(seen, ['a@2', 'b@2', 'reply@3']);
  // With input instead, the reply is taken in before 'b' is carried out: 'b' sees later state.
  seen.length = 0;
  taken = 0;
  use = 'input';
  driver.input(() => {
    core.take('a');
    core.take('b');
  });
  assert.deepEqual(seen, ['a@2', 'b@3', 'reply@3']);
  assert.equal(
    driver.defer(() => 7),
    7,
  );
});
