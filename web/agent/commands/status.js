// `tether agent status`: the sidecar, its link to the room and the roster size.
export default {
  name: 'status',
  usage: '',
  summary: 'the sidecar and its connection to the room',
  async run({ out, call }) {
    const r = await call('status');
    out(
      r,
      `'${r.id}' in room '${r.room}' via ${r.relay}: ${r.connected ? 'connected' : 'reconnecting'}, ${r.roster.length} peer(s); sidecar pid ${r.pid}`,
    );
  },
};
