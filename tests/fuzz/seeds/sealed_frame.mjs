// Seeds for fuzz_sealed_frame: the received sequences of fixtures/room/sealed.json (real frames,
// tampered, replayed, reordered, of another secret or session), one frame per line, and each
// sealed frame alone.
export default function seeds({ read }) {
  const f = read('fixtures/room/sealed.json');
  return [
    ...f.open.map((c) => Buffer.from(c.frames.join('\n'))),
    ...f.seal.frames.map((fr) => Buffer.from(fr.frame)),
  ];
}
