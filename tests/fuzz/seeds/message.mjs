// Seeds for fuzz_message: golden messages, valid and invalid, and the v5 compat messages.
export default function seeds({ read, b64 }) {
  const messages = read('fixtures/wire/messages.json');
  const out = [...messages.valid, ...messages.invalid]
    .map((v) => b64(v.text_b64))
    .filter((text) => text.length <= 4096);
  for (const f of ['control_frames.json', 'datagrams.json']) {
    for (const v of read(`fixtures/compat/dimos-v5/${f}`).vectors)
      out.push(Buffer.from(JSON.stringify(v.message)));
  }
  return out;
}
