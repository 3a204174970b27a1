// Seeds for fuzz_signaling: each scenario of fixtures/bus/signaling.json as lines the harness reads
// (a leading byte picks the input: 0 a signal from the lower peer, 1 from the higher, 2 a welcome,
// 5..9 events of the current connection, 10 a timeout).
export default function seeds({ read }) {
  const f = read('fixtures/bus/signaling.json');
  const out = [];
  for (const sc of f.scenarios) {
    for (const t of sc.traces) {
      const lines = [];
      for (const st of t.steps) {
        const i = st.input;
        if (i.in === 'signal') lines.push(String.fromCharCode(i.from < 'm' ? 0 : 1) + i.data);
        else if (i.in === 'welcome') lines.push('\x02' + (i.members[0] ?? ''));
        else if (i.in === 'description') lines.push('\x05' + i.sdp);
        else if (i.in === 'remote-set') lines.push('\x06');
        else if (i.in === 'channels-open') lines.push('\x07');
        else if (i.in === 'state') lines.push('\x08' + i.state);
        else if (i.in === 'timeout') lines.push('\x0a');
      }
      out.push(Buffer.from(lines.join('\n'), 'latin1'));
    }
  }
  return out;
}
