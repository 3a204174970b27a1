// Usage and --help text, rendered from the command registry (web/agent/commands/index.js), so a
// command's flags, usage line and help can never disagree. Text that quotes a bound takes it from
// the bus core's limits when the WASM module is loaded (`limits` is null when it is not).

/** A spec field that may depend on the core's limits. */
const text = (x, limits) => (typeof x === 'function' ? x(limits) : (x ?? ''));

export const EXIT_CODES =
  'exit codes: 0 done; 1 the sidecar could not be asked, or a bug (a stack trace: please report it); 2 usage error or refused; 3 cannot connect (retrying will not help)';

/** The words after `tether`: "agent send", "agent share add", "mcp" (a group that is one command). */
export const commandPath = (group, cmd, sub) =>
  [group.name, cmd === group.command ? null : cmd?.name, sub?.name].filter(Boolean).join(' ');

/** [usage line, summary] per form of the command: one, or one per subcommand. */
function forms(group, cmd, limits) {
  if (cmd.subcommands)
    return cmd.subcommands.map((s) => [
      `${commandPath(group, cmd, s)} ${text(s.usage, limits)}`.trim(),
      s.summary,
    ]);
  return [[`${commandPath(group, cmd)} ${text(cmd.usage, limits)}`.trim(), cmd.summary]];
}
const usageLines = (group, cmd, limits) => forms(group, cmd, limits).map(([u]) => u);

function flagLines(options, limits) {
  const rows = Object.entries(options ?? {}).map(([name, o]) => [
    `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}${o.short ? `, -${o.short}` : ''}`,
    text(o.help, limits),
  ]);
  const w = Math.max(0, ...rows.map(([l]) => l.length));
  return rows.map(([l, h]) => `  ${l.padEnd(w)}  ${h}`.trimEnd());
}

/** `tether --help`. */
export function topHelp(groups) {
  const w = Math.max(...groups.map((g) => g.name.length));
  return [
    'usage: tether <group> <command> [flags]   (tether <group> --help lists its commands)',
    ...groups.map((g) => `  ${g.name.padEnd(w)}  ${g.summary}`),
    EXIT_CODES,
  ].join('\n');
}

/** `tether agent --help`: every command on one line with its summary. */
export function groupHelp(group, limits) {
  if (group.command) return commandHelp(group, group.command, null, limits);
  const prefix = `${group.name} `;
  const rows = group.commands.flatMap((c) =>
    forms(group, c, limits).map(([u, s]) => [u.slice(prefix.length), s]),
  );
  const w = Math.min(44, Math.max(...rows.map(([u]) => u.length)));
  return [
    `usage: tether ${group.name} <command> [flags]${group.note ? `   ${group.note}` : ''}`,
    ...rows.map(([u, s]) =>
      u.length > w ? `  ${u}\n  ${''.padEnd(w)}  ${s}` : `  ${u.padEnd(w)}  ${s}`,
    ),
    `flags for every command: ${globalFlags(group)}; \`tether ${group.name} <command> --help\` shows its own`,
  ].join('\n');
}

const globalFlags = (group) =>
  [
    ...Object.entries(group.globals ?? {}).map(
      ([n, o]) => `--${n}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`,
    ),
    '--help',
  ].join(', ');

/** `tether agent send --help`. */
export function commandHelp(group, cmd, sub, limits) {
  const c = sub ?? cmd;
  let lines;
  if (sub || !cmd.subcommands)
    lines = [
      `usage: tether ${commandPath(group, cmd, sub)} ${text(c.usage, limits)}`.trimEnd(),
      '',
      c.summary,
    ];
  else {
    const rows = forms(group, cmd, limits);
    const w = Math.max(...rows.map(([u]) => u.length));
    lines = [
      `usage: tether ${commandPath(group, cmd)} <command>   (${cmd.summary})`,
      ...rows.map(([u, s]) => `  tether ${u.padEnd(w)}  ${s}`),
    ];
  }
  const details = text(c.details, limits);
  if (details) lines.push(details);
  const own = flagLines(c.options, limits);
  if (own.length) lines.push('', 'flags:', ...own);
  if (!sub && cmd.subcommands)
    for (const s of cmd.subcommands) {
      const f = flagLines(s.options, limits);
      if (f.length) lines.push('', `flags of ${commandPath(group, cmd, s)}:`, ...f);
    }
  if (!group.command) lines.push('', `and for every ${group.name} command: ${globalFlags(group)}`);
  return lines.join('\n');
}

/** The one or two usage lines shown under an error. */
export function shortUsage(group, cmd, sub, limits) {
  if (!cmd)
    return `usage: tether ${group.name} <command> [flags]   (tether ${group.name} --help lists them)`;
  const lines = sub
    ? [`${commandPath(group, cmd, sub)} ${text(sub.usage, limits)}`.trim()]
    : usageLines(group, cmd, limits);
  return [
    ...lines.map((u, i) => `${i === 0 ? 'usage: tether ' : '       tether '}${u}`),
    `(tether ${commandPath(group, cmd, sub)} --help for more)`,
  ].join('\n');
}
