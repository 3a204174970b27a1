// What a command's run(ctx) gets: its flags and arguments, the state dir, output that respects
// --json, and the sidecar and bus it may need. Built once per invocation by the group
// (web/agent/commands/index.js).
import { bus, busLoadFailure } from '../envelope.js';
import { resolveStateDir } from '../state.js';
import { UsageError } from './args.js';
import { call, rpc } from './sidecar-client.js';

/** A refusal: one line, exit 2. */
export const fail = (msg) => {
  throw new UsageError(msg);
};

/** A missing or malformed argument: one line plus the command's usage, exit 2. */
export const usage = (msg) => {
  throw new UsageError(msg, { showUsage: true });
};

/** The relay could not be joined for a reason retrying will not fix: exit 3. */
export class CannotConnect extends Error {
  exitCode = 3;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `word` as one shell word: as is when it is plain, else in single quotes. */
const shellWord = (word) =>
  /^[\w@%+=:,./~-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * @param {{values: Record<string, any>, positionals: string[], io: {stdout(s: string): void, stderr(s: string): void}, limits: object|null}} o
 */
export function agentContext({ values, positionals, io, limits }) {
  const dir = resolveStateDir(values.dir);
  return {
    dir,
    /** ` --dir DIR` when --dir was given, for a command we print to be run as printed. */
    dirArg: values.dir === undefined ? '' : ` --dir ${shellWord(dir)}`,
    v: values,
    pos: positionals,
    limits,
    json: !!values.json,
    /** The command's answer: `obj` with --json, else the human line(s). */
    out: (obj, human) => io.stdout(values.json ? JSON.stringify(obj) : human),
    /** Progress and warnings: stderr, so stdout stays the answer. */
    progress: (line) => io.stderr(line),
    rpc: (cmd, args, ep) => rpc(dir, cmd, args, ep),
    call: (cmd, args) => call(dir, cmd, args),
    /** The bus core; commands that check records with it fail here, naming the build step. */
    needBus() {
      const api = bus();
      if (!api) fail(busLoadFailure());
      return api;
    },
  };
}

/** `tether rooms ...`: no state dir; emitSecret() is the one output that is not redacted. */
export function roomsContext({ values, positionals, io }) {
  return {
    v: values,
    pos: positionals,
    json: !!values.json,
    out: (obj, human) => io.stdout(values.json ? JSON.stringify(obj) : human),
    progress: (line) => io.stderr(line),
    /** Prints a credential the user asked for (a minted ticket), unredacted, on stdout. */
    emitSecret: (text) => io.secret(text),
  };
}
