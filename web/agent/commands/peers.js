// `tether agent peers`: everyone the sidecar knows in the room, with what they announced.
export default {
  name: 'peers',
  usage: '',
  summary: 'the room roster: id, display name, online or not, role, skills',
  async run({ out, call }) {
    const r = await call('peers');
    out(
      r,
      r.peers
        .map((p) =>
          [
            p.id,
            p.name && p.name !== p.id ? p.name : '-',
            p.open ? 'online' : 'offline',
            p.role ?? '-',
            p.skills.join(',') || '-',
          ].join('\t'),
        )
        .join('\n') || '(nobody else in the room)',
    );
  },
};
