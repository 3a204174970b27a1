// The one JS driver for every core (docs/design.md § Driving a core; src/common/drive.hpp is the
// C++ side of the same contract). A glue wraps its core so that it offers
//   pollAction()    -> the next thing to do, or null/undefined when there is none
//   pollEvent()     -> the next thing the application should learn, or null/undefined (optional)
//   pollTimeout()   -> the absolute ms at which it wants handleTimeout(now), or null (optional)
//   handleTimeout(now)                                                                (optional)
// and hands it to createDriver with a host that carries actions out. Every input then goes through
// driver.input(now => core.handleX(..., now)): the driver runs it, drains every action and event in
// order, and keeps exactly one timer at the core's earliest deadline. The host answers an action
// by feeding its result back in the same way (synchronously from perform, or later); nothing here
// knows any protocol. An input that is not the answer to what is being performed (another
// socket's message that arrived from inside a perform) goes through driver.defer instead: it waits
// until the drain in progress settles, so the actions already polled are carried out against the
// state they were made in (a commit's onCommit reads the room live).

const MAX_DELAY_MS = 2 ** 31 - 1; // setTimeout's own bound
const DEFAULT_MAX_ITEMS = 1_000_000;

/**
 * @template A, E
 * @param {import('./driver.d.ts').DrivenCore<A, E>} core
 * @param {import('./driver.d.ts').DriverHost<A, E>} host
 * @param {import('./driver.d.ts').DriverOptions} [options]
 * @returns {import('./driver.d.ts').Driver}
 */
export function createDriver(core, host, options = {}) {
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((h) => clearTimeout(h));
  const onError =
    options.onError ?? ((error, where) => console.error(`tether driver: ${where} threw`, error));
  const maxItems = options.maxItems ?? DEFAULT_MAX_ITEMS;
  const hasEvents = typeof core.pollEvent === 'function';
  const hasTimeout =
    typeof core.pollTimeout === 'function' && typeof core.handleTimeout === 'function';

  let draining = false;
  let closed = false;
  const deferred = [];
  let timer = null;
  let timerAt = Infinity;

  function drain() {
    if (draining) return; // an input fed from perform/event: the running loop picks its output up
    draining = true;
    try {
      let items = 0;
      for (;;) {
        const action = core.pollAction();
        if (action !== null && action !== undefined) {
          try {
            host.perform(action);
          } catch (error) {
            onError(error, 'perform');
          }
        } else {
          const event = hasEvents ? core.pollEvent() : null;
          if (event === null || event === undefined) break;
          try {
            host.event?.(event);
          } catch (error) {
            onError(error, 'an event handler');
          }
        }
        if (++items >= maxItems) {
          onError(
            new Error(`the core produced ${items} items without settling; stopped draining`),
            'drain',
          );
          break;
        }
      }
    } finally {
      draining = false;
    }
    schedule();
    while (deferred.length > 0 && !draining) {
      const fn = deferred.shift();
      try {
        fn(now());
      } catch (error) {
        onError(error, 'a deferred input');
      }
      drain();
    }
  }

  // One timer at the earliest deadline. A deadline that moved later keeps the earlier timer: waking
  // early is harmless (the contract), and it spares a clear and a set per input.
  function schedule() {
    if (closed || !hasTimeout) return;
    const at = core.pollTimeout();
    if (at === null || at === undefined || !Number.isFinite(at)) return;
    if (timer !== null && timerAt <= at) return;
    if (timer !== null) clearTimer(timer);
    timerAt = at;
    timer = setTimer(fire, Math.max(0, Math.min(at - now(), MAX_DELAY_MS)));
    // Node's timers keep the process alive unless unref'd; other hosts' timers have no unref.
    /** @type {{unref?: () => void} | null} */ (timer)?.unref?.();
  }

  function fire() {
    timer = null;
    timerAt = Infinity;
    if (closed) return;
    try {
      core.handleTimeout(now());
    } catch (error) {
      onError(error, 'handleTimeout');
    }
    drain();
  }

  return {
    input(fn) {
      try {
        return fn(now());
      } finally {
        drain();
      }
    },
    // For a core that says when an input needs the time (the bus: most messages do not, and a
    // clock read is a measurable part of receiving one, bench/README.md § bus): fn reads now()
    // itself when asked.
    run(fn) {
      try {
        return fn();
      } finally {
        drain();
      }
    },
    defer(fn) {
      if (!draining) return this.input(fn);
      deferred.push(fn);
      return undefined;
    },
    drain,
    now,
    close() {
      closed = true;
      if (timer !== null) clearTimer(timer);
      timer = null;
      timerAt = Infinity;
    },
    get closed() {
      return closed;
    },
  };
}
