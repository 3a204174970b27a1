// Types of web/glue/driver.js: the one driver every glue runs its core with
// (docs/design.md § Driving a core).

/** What a glue's wrapper of a core offers the driver. */
export interface DrivenCore<A, E = never> {
  /** The next action to carry out, in order; null or undefined when there is none. */
  pollAction(): A | null | undefined;
  /** The next event for the application; null or undefined when there is none. */
  pollEvent?(): E | null | undefined;
  /** The absolute time (ms, the driver's clock) to call handleTimeout, or null for none. */
  pollTimeout?(): number | null | undefined;
  handleTimeout?(nowMs: number): void;
}

/** Carries the core's output out. Results go back in through driver.input. */
export interface DriverHost<A, E = never> {
  perform(action: A): void;
  event?(event: E): void;
}

export interface DriverOptions {
  /** The clock every input and timeout gets (default Date.now). */
  now?: () => number;
  setTimer?: (fn: () => void, delayMs: number) => unknown;
  clearTimer?: (handle: any) => void;
  /** A host callback threw; the driver goes on with the next item (default console.error). */
  onError?: (error: unknown, where: string) => void;
  /** A drain that sees this many items without settling stops and reports (default 1e6). */
  maxItems?: number;
}

export interface Driver {
  /** Runs fn(now) against the core, then drains its output and reschedules; returns fn's value. */
  input<R>(fn: (nowMs: number) => R): R;
  /**
   * Like input, but reads no clock: for a core that asks for the time only when an input needs it
   * (fn calls driver.now() then), so an input that does not pays no clock read.
   */
  run<R>(fn: () => R): R;
  /**
   * Like input, but when a drain is in progress (fn comes from inside perform or an event handler
   * and is not the answer to it), fn waits until that drain settles; returns fn's value when it
   * ran at once, else undefined.
   */
  defer<R>(fn: (nowMs: number) => R): R | undefined;
  /** Drains pending output (after construction, say). */
  drain(): void;
  now(): number;
  /** Stops the timer; later inputs still run and drain but schedule nothing. */
  close(): void;
  readonly closed: boolean;
}

export function createDriver<A, E = never>(
  core: DrivenCore<A, E>,
  host: DriverHost<A, E>,
  options?: DriverOptions,
): Driver;
