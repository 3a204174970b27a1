// Wake hooks (agent-bus-and-swarm.md § Local state and CLI boundaries): run a command when new
// mail arrives, so a turn-based agent is woken between turns.
//
// Limits and delays are validated and captured when the hook is constructed (later changes to
// the options object change nothing); minIntervalMs 0 explicitly disables the rate limit. The
// child's environment drops the inherited TETHER_ROOM (a woken agent must not silently act in
// the room its parent was started for) and names the room as TETHER_WAKE_ROOM instead.
import { spawn } from 'node:child_process';

export const WAKE_LIMITS = Object.freeze({
  commandMaxBytes: 4096,
  minIntervalMaxMs: 24 * 60 * 60 * 1000,
  delayMaxMs: 60 * 60 * 1000,
  timeoutMaxMs: 24 * 60 * 60 * 1000,
});

function ms(name, v, max, flag) {
  if (!Number.isInteger(v) || v < 0 || v > max) {
    throw new RangeError(
      `wake ${name} must be a whole number of milliseconds from 0 to ${max} (got ${JSON.stringify(v)}); fix ${flag}`,
    );
  }
  return v;
}

/** Validates wake options; throws RangeError/TypeError naming the flag to fix. */
export function validateWakeOptions(opts) {
  const command = opts.command;
  if (
    typeof command !== 'string' ||
    command.trim() === '' ||
    Buffer.byteLength(command) > WAKE_LIMITS.commandMaxBytes
  ) {
    throw new TypeError(
      `wake command must be a non-empty shell command of at most ${WAKE_LIMITS.commandMaxBytes} bytes; fix --wake`,
    );
  }
  return Object.freeze({
    command,
    minIntervalMs: ms(
      'minimum interval',
      opts.minIntervalMs ?? 30_000,
      WAKE_LIMITS.minIntervalMaxMs,
      '--wake-min-interval-ms',
    ),
    delayMs: ms('delay', opts.delayMs ?? 0, WAKE_LIMITS.delayMaxMs, '--wake-delay-ms'),
    timeoutMs: ms(
      'timeout',
      opts.timeoutMs ?? 10 * 60 * 1000,
      WAKE_LIMITS.timeoutMaxMs,
      '--wake-timeout-ms',
    ),
  });
}

export class WakeHook {
  #cfg;
  #room;
  #baseEnv;
  #extraEnv;
  #log;
  #timer = null;
  #child = null;
  #pending = false;
  #lastStart = -Infinity;
  #closed = false;
  stats = { triggers: 0, runs: 0, coalesced: 0, failures: 0, lastExit: null };

  /**
   * @param {Parameters<typeof validateWakeOptions>[0]} opts
   * @param {{room: string, env?: NodeJS.ProcessEnv, extraEnv?: Record<string, string>,
   *   log?: (line: string) => void, stdio?: import('node:child_process').StdioOptions}} ctx
   */
  constructor(opts, { room, env = process.env, extraEnv = {}, log = () => {}, stdio = 'ignore' }) {
    this.#cfg = validateWakeOptions(opts);
    this.#room = room;
    this.#baseEnv = { ...env };
    this.#extraEnv = { ...extraEnv };
    this.#log = log;
    this.stdio = stdio;
  }

  get config() {
    return this.#cfg;
  }

  /** The child's environment: inherited minus TETHER_ROOM, plus TETHER_WAKE_ROOM. */
  childEnv() {
    const env = { ...this.#baseEnv, ...this.#extraEnv };
    delete env.TETHER_ROOM;
    env.TETHER_WAKE_ROOM = this.#room;
    return env;
  }

  /** New mail arrived. Runs the command after the delay, at most once per interval; coalesces. */
  trigger() {
    if (this.#closed) return;
    this.stats.triggers++;
    if (this.#timer || this.#child) {
      this.#pending = true;
      this.stats.coalesced++;
      return;
    }
    this.#schedule();
  }

  #schedule() {
    const now = Date.now();
    const at = Math.max(
      now + this.#cfg.delayMs,
      this.#cfg.minIntervalMs === 0 ? now : this.#lastStart + this.#cfg.minIntervalMs,
    );
    this.#timer = setTimeout(() => this.#run(), Math.max(0, at - now));
  }

  #run() {
    this.#timer = null;
    if (this.#closed) return;
    this.#pending = false;
    this.#lastStart = Date.now();
    this.stats.runs++;
    let child;
    try {
      child = spawn('/bin/sh', ['-c', this.#cfg.command], {
        env: this.childEnv(),
        stdio: this.stdio,
      });
    } catch (err) {
      this.stats.failures++;
      this.#log(`wake: could not start '${this.#cfg.command}': ${err.message}`);
      this.#after();
      return;
    }
    this.#child = child;
    const kill = setTimeout(() => child.kill('SIGKILL'), this.#cfg.timeoutMs);
    child.once('error', (err) => {
      this.#log(`wake: '${this.#cfg.command}' failed to start: ${err.message}`);
    });
    child.once('close', (code, signal) => {
      clearTimeout(kill);
      this.#child = null;
      this.stats.lastExit = signal ?? code;
      if (code !== 0) {
        this.stats.failures++;
        this.#log(`wake: '${this.#cfg.command}' exited with ${signal ?? code}`);
      }
      this.#after();
    });
  }

  #after() {
    if (this.#pending && !this.#closed) this.#schedule();
  }

  close() {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
