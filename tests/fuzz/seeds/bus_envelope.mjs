// Seeds for fuzz_bus_envelope: every golden bus envelope (valid and invalid, except the 256 KiB
// oversized one), every envelope of the ninja-p2p exchanges (fixtures/bus/ninja.json: its pings,
// commands, per-message history replays, get-file files, and our answers), plus a history replay
// and a handoff for the bus paths behind the parser.
export default function seeds({ read, b64 }) {
  const f = read('fixtures/bus/envelopes.json');
  const ninja = read('fixtures/bus/ninja.json').exchanges.flatMap((x) =>
    x.steps.flatMap((s) => [
      ...(s.text ? [s.text] : []),
      ...(s.command ? [s.command] : []),
      ...s.out.map((o) => o.text),
    ]),
  );
  const from = { streamId: 'p', role: 'agent', name: 'P', instanceId: 'i' };
  const env = (type, to, payload) =>
    JSON.stringify({
      v: 1,
      id: `s-${type}`,
      type,
      from,
      to,
      topic: null,
      ts: 1700000000000,
      payload,
    });
  return [
    ...[...new Set(ninja)].map((t) => Buffer.from(t)),
    ...f.valid.map((v) => Buffer.from(v.text)),
    ...f.invalid.filter((v) => v.text !== undefined).map((v) => Buffer.from(v.text)),
    ...f.invalid.filter((v) => v.text_b64 !== undefined).map((v) => b64(v.text_b64)),
    Buffer.from(env('handoff', 'me', { request: 'review', expiresAt: 1700000060000 })),
    Buffer.from(env('history_request', 'me', { count: 500 })),
    Buffer.from(
      env('ack', 'me', {
        messageId: 'x',
        senderInstanceId: 'i0',
        forType: 'handoff',
        receipt: 'stored',
      }),
    ),
    // Shapes at the edge of the one-pass scanner (src/bus/scan.cpp): escapes, surrogate pairs,
    // numbers it converts or leaves to the DOM path, nesting at the bound, key orders.
    Buffer.from(
      env('chat', null, {
        text: 'caf\u00e9 \ud83d\ude00 "q" \\ \n',
        n: [0, -1.5, 12345678901234, 0.001],
        d: [[[[[]]]]],
      }),
    ),
    Buffer.from(
      env('chat', null, '[' + '['.repeat(62) + ']'.repeat(62) + ']')
        .replace('"[[', '[[')
        .replace(']]"', ']]'),
    ),
    Buffer.from(
      '{"payload":{"a":-0.0},"ts":1.5,"type":"event","from":{"instanceId":"i","name":"n","role":"r","streamId":"s"},"id":"x","v":1,"topic":"t","to":"me"}',
    ),
    // A finite ts far outside any clock (found by the fuzzer: the harness once turned it into an
    // integer, which is undefined behaviour).
    Buffer.from(
      '{"v":1,"id":"big-ts","type":"chat","from":{"streamId":"p","role":"agent","name":"P","instanceId":"i"},"to":null,"topic":null,"ts":2e118,"payload":{"text":"x"}}',
    ),
    Buffer.from(
      '{"v":1,"id":"a\\u0062","type":"chat","from":{"streamId":"s","role":"r","name":"n","instanceId":"i"},"ts":1e3,"payload":"\\ud800"}',
    ),
    Buffer.from(
      env('file_chunk', 'me', {
        transferId: 't1',
        index: 3,
        totalChunks: 9,
        data: Buffer.alloc(3000, 7).toString('base64'),
      }),
    ),
    Buffer.from(
      env('file_offer', 'me', {
        transferId: 't',
        name: 'f',
        mimeType: 'x/y',
        kind: 'file',
        size: 3,
        sha256: 'a'.repeat(64),
        chunkSize: 2,
        totalChunks: 2,
      }),
    ),
    Buffer.from(
      env('command', 'me', {
        command: ' Get-File ',
        args: { share: 'docs', path: '../etc/passwd' },
      }),
    ),
    Buffer.from(env('history_replay', 'me', { messages: [] })),
  ];
}
