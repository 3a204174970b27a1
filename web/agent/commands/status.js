// `tether agent status`: the sidecar, its link to the room (and why it is not in, when it is
// not: the relay's answer, named by web/agent/sidecar/link.js) and the roster size.
export default {
  name: 'status',
  usage: '',
  summary: 'the sidecar and its connection to the room (and why it is not in)',
  async run({ out, call }) {
    const r = await call('status');
    const f = r.link?.failure;
    const state = r.connected
      ? 'connected'
      : f
        ? `not connected (attempt ${f.attempt}${f.retryable ? ', retrying' : ', retrying will not help'}): ${f.message}`
        : r.link?.everConnected
          ? 'reconnecting'
          : 'connecting';
    const privacy =
      r.encrypted === true
        ? 'encrypted (envelopes sealed with the room secret; the relay sees only ciphertext)'
        : r.encrypted === false
          ? 'unencrypted (no room secret: the relay reads every envelope; join with --secret-file to seal them)'
          : null;
    // Lanes whose sealed epoch handshake has not finished: nothing goes to those peers yet.
    const awaiting = r.sealed?.awaiting?.length
      ? `; sealed handshake pending with ${r.sealed.awaiting.join(', ')} (no answer with their epoch yet: nothing is sent to them until it comes; if it never does, the relay is withholding it)`
      : '';
    out(
      r,
      `'${r.id}' in room '${r.room}' via ${r.relay}: ${state}; ${r.roster.length} peer(s); sidecar pid ${r.pid}${privacy ? `; ${privacy}` : ''}${awaiting}`,
    );
  },
};
