// How envelopes and records read on a terminal (the --json output carries them whole).

export const iso = (ms) => new Date(ms).toISOString();

/** One line per envelope: time, sender, route, type, id, topic and body. */
export function formatEnv(m) {
  const e = m.envelope ?? m;
  const p = e.payload;
  const body =
    e.type === 'handoff'
      ? `HANDOFF (expires ${iso(p.expiresAt)}): ${p.request}`
      : typeof p?.text === 'string'
        ? p.text
        : JSON.stringify(p);
  return `[${iso(e.ts)}] ${e.from.streamId}${e.to ? '' : ' (broadcast)'} ${e.type} ${e.id}: ${body}`;
}
