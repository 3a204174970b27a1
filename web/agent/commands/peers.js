// `tether agent peers`: everyone the sidecar knows in the room, with what they announced.
export default {
  name: 'peers',
  usage: '',
  summary: 'the room roster: who is online, their role and skills',
  async run({ out, call }) {
    const r = await call('peers');
    out(
      r,
      r.peers
        .map(
          (p) =>
            `${p.id}\t${p.open ? 'online' : 'offline'}\t${p.role ?? '-'}\t${p.skills.join(',') || '-'}`,
        )
        .join('\n') || '(nobody else in the room)',
    );
  },
};
