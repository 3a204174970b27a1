#!/usr/bin/env node
// The `tether` command line: `tether <group> <command> [flags]`. The groups and their commands are
// registered in web/agent/commands/index.js (one file per command); this file finds the command,
// parses its flags, builds its context and turns failures into one line and an exit code
// (help.js EXIT_CODES). Everything printed passes through redact(): no ticket or token reaches
// the terminal.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { UsageError, closest, parseFlags } from './cli/args.js';
import { commandHelp, commandPath, groupHelp, shortUsage, topHelp } from './cli/help.js';
import { GROUPS } from './commands/index.js';
import { bus, useBus } from './envelope.js';
import { redact } from './redact.js';

const HELP = { type: 'boolean', short: 'h', help: 'this help' };

/**
 * Finds the command (and subcommand) in `args`: the first positionals, skipping flags and the
 * values of the string flags the group or command takes.
 */
function locate(group, args) {
  const stringFlags = new Set();
  const addStrings = (opts) => {
    for (const [n, o] of Object.entries(opts ?? {})) if (o.type === 'string') stringFlags.add(n);
  };
  addStrings(group.globals);
  let cmd = null;
  let sub = null;
  let unknown = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    if (a.startsWith('-') && a.length > 1) {
      const name = a.startsWith('--') ? a.slice(2).split('=')[0] : '';
      if (!a.includes('=') && stringFlags.has(name)) i++;
      continue;
    }
    if (!cmd) {
      cmd = group.commands.find((c) => c.name === a) ?? null;
      if (!cmd) {
        unknown = a;
        break;
      }
      addStrings(cmd.options);
      for (const s of cmd.subcommands ?? []) addStrings(s.options);
      if (!cmd.subcommands) break;
      continue;
    }
    sub = cmd.subcommands.find((s) => s.name === a) ?? null;
    if (!sub) unknown = a;
    break;
  }
  return { cmd, sub, unknown };
}

function wantsHelp(args) {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

async function runGroup(group, args, io) {
  await useBus(); // cheap (one small module); text quoting a core bound needs its limits
  const limits = bus()?.limits ?? null;
  // A group that is one command (`tether mcp`) has no command word to find.
  const { cmd, sub, unknown } = group.command
    ? { cmd: group.command, sub: null, unknown: null }
    : locate(group, args);
  const where = `tether ${commandPath(group, cmd, sub)}`;
  try {
    return await runCommand(group, args, io, limits, cmd, sub, unknown);
  } catch (err) {
    if (err && typeof err === 'object' && !err.where) err.where = where;
    throw err;
  }
}

async function runCommand(group, args, io, limits, cmd, sub, unknown) {
  if (unknown !== null) {
    const names = cmd ? cmd.subcommands.map((s) => s.name) : group.commands.map((c) => c.name);
    const near = closest(unknown, names);
    const what = cmd ? `${cmd.name} command` : 'command';
    throw new UsageError(
      `unknown ${what} '${unknown}'${near ? `; did you mean '${near}'?` : `; one of: ${names.join(', ')}`}`,
      { usage: shortUsage(group, cmd, null, limits) },
    );
  }
  if (wantsHelp(args) || !cmd) {
    if (!cmd && !wantsHelp(args))
      throw new UsageError(`give a command`, { usage: groupHelp(group, limits) });
    io.stdout(cmd ? commandHelp(group, cmd, sub, limits) : groupHelp(group, limits));
    return;
  }
  if (cmd.subcommands && !sub && !cmd.defaultSub)
    throw new UsageError(
      `${cmd.name} needs a command: ${cmd.subcommands.map((s) => s.name).join(', ')}`,
      {
        usage: shortUsage(group, cmd, null, limits),
      },
    );
  const target = sub ?? cmd.subcommands?.find((s) => s.name === cmd.defaultSub) ?? cmd;
  const options = { ...group.globals, ...cmd.options, ...target.options, help: HELP };
  let parsed;
  try {
    parsed = parseFlags(args, options);
  } catch (err) {
    if (err instanceof UsageError && !err.usage) err.usage = shortUsage(group, cmd, sub, limits);
    throw err;
  }
  // Drop the command words themselves; what is left are the command's own positionals.
  const pos = parsed.positionals.slice(group.command ? 0 : sub ? 2 : 1);
  const ctx = group.context({ values: parsed.values, positionals: pos, io, limits });
  try {
    await target.run(ctx);
  } catch (err) {
    // A missing or extra argument is shown with the command's usage; a refusal is not.
    if (err instanceof UsageError && err.usage === null && err.showUsage)
      err.usage = shortUsage(group, cmd, sub, limits);
    throw err;
  }
}

/**
 * Runs one invocation. `io` receives every line (redacted); resolves when the command is done,
 * rejects with a UsageError (exit 2), an error with `exitCode`, or a bug (exit 1).
 */
export async function main(argv, io = defaultIo) {
  const out = {
    stdout: (s) => io.stdout(redact(s)),
    stderr: (s) => io.stderr(redact(s)),
    secret: (s) => io.stdout(s),
  };
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    out.stdout(topHelp(GROUPS));
    return;
  }
  if (first === undefined) throw new UsageError('give a command group', { usage: topHelp(GROUPS) });
  const group = GROUPS.find((g) => g.name === first);
  if (!group) {
    const near = closest(
      first,
      GROUPS.map((g) => g.name),
    );
    throw new UsageError(
      `unknown command group '${first}'${near ? `; did you mean '${near}'?` : ''}`,
      { usage: topHelp(GROUPS) },
    );
  }
  try {
    await runGroup(group, rest, out);
  } catch (err) {
    if (err && typeof err === 'object' && !err.where) err.where = `tether ${group.name}`;
    throw err;
  }
}

const defaultIo = {
  stdout: (s) => process.stdout.write(`${s}\n`),
  stderr: (s) => process.stderr.write(`${s}\n`),
};

/** The one line (plus the usage it carries) an error prints, and the exit code it ends with. */
export function report(err) {
  const where = err?.where ?? 'tether';
  if (err instanceof UsageError)
    return { code: 2, text: `${where}: ${err.message}${err.usage ? `\n${err.usage}` : ''}` };
  if (Number.isInteger(err?.exitCode))
    return { code: err.exitCode, text: `${where}: ${err.message}` };
  return { code: 1, text: err?.stack ?? String(err) };
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err) => {
      const r = report(err);
      process.stderr.write(`${redact(r.text)}\n`);
      process.exit(r.code);
    },
  );
}
