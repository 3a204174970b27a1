// `tether agent handoffs`: the handoffs we sent and their states.
export default {
  name: 'handoffs',
  usage: '',
  summary: 'sent handoffs: pending, stored or expired',
  async run({ out, call }) {
    const r = await call('handoffs');
    out(
      r,
      r.handoffs.map((h) => `${h.id}\t${h.to}\t${h.state}\tsends=${h.sends}`).join('\n') ||
        '(no handoffs sent)',
    );
  },
};
