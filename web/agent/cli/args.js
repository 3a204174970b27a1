// Flag parsing for the `tether` command line, as the tools people know do it (getopt_long, git):
// `--name VALUE`, `--name=VALUE`, booleans that take no value, `-h`, and `--` ending the flags.
// A flag's value is the next argument even when it starts with '-' (so `--count -5` reaches the
// range check and `--topic -` is a topic), unless it is one of the command's own flags. Errors are one line that names the fix, with the
// closest valid flag when there is one; the caller adds the usage of that command only.
//
// Written here rather than on node:util parseArgs: its strict mode reports only the first problem
// in its own wording ("Unknown option '--x'. To specify a positional argument starting with a
// '-', place it after a '--' separator"), and its loose mode turns a typo into a boolean.

export class UsageError extends Error {
  /**
   * @param {string} message
   * @param {{usage?: string, showUsage?: boolean}} [extra] `showUsage`: the command's usage
   *   follows the message (a missing or malformed argument, not a refusal)
   */
  constructor(message, extra = {}) {
    super(message);
    /** @type {string | null} */
    this.usage = extra.usage ?? null;
    this.showUsage = extra.showUsage ?? false;
  }
}

/** Levenshtein distance, bounded: the flag and command lists are tiny, so no library is needed. */
export function editDistance(a, b) {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** The candidate closest to `word`, or null when none is close enough to be a likely typo. */
export function closest(word, candidates) {
  let best = null;
  let bestD = Infinity;
  for (const c of candidates) {
    // A prefix is the likeliest intent (`--exp` for `--expires-in`).
    const d = c.startsWith(word) && word.length >= 2 ? 0.5 : editDistance(word, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== null && bestD <= Math.max(2, Math.floor(best.length / 3)) ? best : null;
}

/**
 * Parses `args` against `options` ({name: {type: 'string'|'boolean', short?}}).
 * @returns {{values: Record<string, string|boolean>, positionals: string[]}}
 * @throws {UsageError}
 */
export function parseFlags(args, options) {
  /** @type {Record<string, string|boolean>} */
  const values = {};
  const positionals = [];
  const shorts = new Map(
    Object.entries(options)
      .filter(([, o]) => o.short)
      .map(([n, o]) => [o.short, n]),
  );
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    let name;
    let inline;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      inline = eq < 0 ? undefined : a.slice(eq + 1);
    } else if (a.length === 2 && a.startsWith('-') && !/^-\d/.test(a)) {
      // Only single-letter short flags exist (-h); `-5` is a value, `-` means stdin, and a longer
      // word after one dash is an argument: message ids are base64url and may start with '-'.
      name = shorts.get(a.slice(1));
      if (!name) throw unknownFlag(a, options);
    } else {
      positionals.push(a);
      continue;
    }
    const spec = options[name];
    if (!spec) throw unknownFlag(`--${name}`, options);
    if (spec.type === 'boolean') {
      if (inline !== undefined)
        throw new UsageError(`--${name} takes no value (got '--${name}=${inline}')`);
      values[name] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      // The next argument is the value, unless it is another of our flags (`--take --json`
      // forgot the value; `--count -5` did not).
      const next = args[i + 1];
      const isFlag =
        next !== undefined &&
        next.startsWith('--') &&
        (next === '--' || next.slice(2).split('=')[0] in options);
      if (next === undefined || isFlag)
        throw new UsageError(`--${name} needs a value: --${name} ${spec.value ?? 'VALUE'}`);
      value = args[++i];
    }
    if (name in values && values[name] !== value)
      throw new UsageError(
        `--${name} was given twice ('${values[name]}' and '${value}'); give it once`,
      );
    values[name] = value;
  }
  return { values, positionals };
}

function unknownFlag(flag, options) {
  const names = Object.keys(options).map((n) => `--${n}`);
  const near = closest(flag.replace(/^-+/, '--'), names);
  // No flag is near: it may be an argument that only looks like one (an id starting with --).
  return new UsageError(
    near
      ? `unknown flag ${flag}; did you mean ${near}?`
      : `unknown flag ${flag}; this command takes ${names.join(', ')} (an argument that starts with -- goes after a lone --)`,
  );
}
