// How envelopes and records read on a terminal (the --json output carries them whole).

export const iso = (ms) => new Date(ms).toISOString();

/** One line per envelope: time, sender (and display name), route, type, #topic, id and body. */
export function formatEnv(m) {
  const e = m.envelope ?? m;
  const p = e.payload;
  const body =
    e.type === 'handoff'
      ? `HANDOFF (expires ${iso(p.expiresAt)}): ${p.request}`
      : typeof p?.text === 'string'
        ? p.text
        : e.type === 'command' && typeof p?.command === 'string'
          ? `${p.command}${p.args === undefined ? '' : ` ${JSON.stringify(p.args)}`}` // {command, args?}
          : JSON.stringify(p);
  const who =
    e.from.name && e.from.name !== e.from.streamId
      ? `${e.from.streamId} (${e.from.name})`
      : e.from.streamId;
  return `[${iso(e.ts)}] ${who}${e.to ? '' : ' (broadcast)'} ${e.type}${e.topic ? ` #${e.topic}` : ''} ${e.id}: ${body}`;
}
