// Seeds for fuzz_bus_envelope: every golden bus envelope (valid and invalid, except the 256 KiB
// oversized one), plus a history replay and a handoff for the bus paths behind the parser.
export default function seeds({ read, b64 }) {
  const f = read('fixtures/bus/envelopes.json');
  const from = { streamId: 'p', role: 'agent', name: 'P', instanceId: 'i' };
  const env = (type, to, payload) => JSON.stringify({ v: 1, id: `s-${type}`, type, from, to, topic: null, ts: 1700000000000, payload });
  return [
    ...f.valid.map((v) => Buffer.from(v.text)),
    ...f.invalid.filter((v) => v.text !== undefined).map((v) => Buffer.from(v.text)),
    ...f.invalid.filter((v) => v.text_b64 !== undefined).map((v) => b64(v.text_b64)),
    Buffer.from(env('handoff', 'me', { request: 'review', expiresAt: 1700000060000 })),
    Buffer.from(env('history_request', 'me', { count: 500 })),
    Buffer.from(env('ack', 'me', { messageId: 'x', senderInstanceId: 'i0', forType: 'handoff', receipt: 'stored' })),
    Buffer.from(env('file_offer', 'me', { transferId: 't', name: 'f', mimeType: 'x/y', kind: 'file', size: 3, sha256: 'a'.repeat(64), chunkSize: 2, totalChunks: 2 })),
  ];
}
