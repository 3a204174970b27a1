// Seeds for fuzz_typed_payload: the words the CLI and MCP tests send (commands with and without
// args, acks, chat, answers with a result and with an error) and share paths as Windows and
// ninja-p2p peers write them, as `flags | u16-LE len | bytes` fields (see the harness).
const field = (s) => {
  const b = Buffer.from(s);
  return Buffer.concat([Buffer.from([b.length & 0xff, b.length >> 8]), b]);
};
const seed = (flags, ...fields) => Buffer.concat([Buffer.from([flags]), ...fields.map(field)]);

export default function seeds() {
  // typed_payload: flags bit 0 clear, type index in bits 1-3, args given with bit 4.
  const type = (i, args = false) => (i << 1) | (args ? 0x10 : 0);
  return [
    seed(type(0), 'hello there', ''),
    seed(type(1), 'build finished', ''),
    seed(type(2), 'list-files', ''),
    seed(type(2, true), 'get-file', '{"share":"docs","path":"a\\\\b.txt"}'),
    seed(type(2, true), ' run\u00a0', '{"deep":[[[[1]]]]}'),
    seed(type(3), 'm-1733270400000-abcd', ''),
    seed(type(3), 'two words', ''),
    seed(type(4), 'x', ''),
    seed(type(5), 'x', ''),
    // command_response_from: flags bit 0 set, result with bit 1, error with bit 2.
    seed(1 | 2, 'm-1', '{"files":["a.txt"]}', ''),
    seed(1 | 4, 'm-2', '', 'no share named docs'),
    seed(1 | 2 | 4, 'm-3', '1', 'both'),
    seed(1, 'm-4', '', ''),
    // share paths ride in the first field of every input.
    seed(type(0), ' ./notes/../plan.md ', ''),
    seed(type(0), '\\\\server\\share\\..\\..\\x', ''),
    seed(type(0), '/../a//b/./c/', ''),
  ];
}
