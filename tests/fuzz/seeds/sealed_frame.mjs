// Seeds for fuzz_sealed_frame: the received sequences of fixtures/room/sealed.json (real frames,
// tampered, replayed, reordered, of another secret, session or epoch), one frame per line; the
// pinned epoch handshake with bob greeting and sealing (`!greet`, `!seal TEXT`) between frames;
// and each sealed frame alone.
export default function seeds({ read }) {
  const f = read('fixtures/room/sealed.json');
  const hs = f.seal.handshake;
  return [
    ...f.open.map((c) => Buffer.from(c.frames.join('\n'))),
    ...f.open.map((c) => Buffer.from(['!greet', ...c.frames, '!seal back'].join('\n'))),
    Buffer.from([hs.greet, '!seal before', hs.answer, '!seal after', hs.answer].join('\n')),
    Buffer.from(['!greet', hs.greet, hs.answer, ...f.seal.frames.map((fr) => fr.frame)].join('\n')),
    ...f.seal.frames.map((fr) => Buffer.from(fr.frame)),
  ];
}
