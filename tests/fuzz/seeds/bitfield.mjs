// Seeds for fuzz_bitfield: every golden announce bitfield (fixtures/swarm/bitfields.json) within
// the harness's 12-bit size, as `u24-LE size | wire bytes | operations`, with set/reset
// operations at both ends and past the end (see the harness for the format).
export default function seeds({ read, b64 }) {
  const all = read('fixtures/swarm/bitfields.json').bitfields;
  return all
    .filter((v) => v.totalChunks < 1 << 12)
    .map((v) => {
      const wire = b64(v.chunks);
      const ops = [];
      for (const i of [0, 1, v.totalChunks - 1, v.totalChunks, v.totalChunks + 3]) {
        if (i < 0) continue;
        ops.push(((i << 1) | 1) & 0xff, ((i << 1) | 1) >> 8, (i << 1) & 0xff, (i << 1) >> 8);
      }
      const n = v.totalChunks;
      const head = Buffer.from([n & 0xff, (n >> 8) & 0xff, n >> 16]);
      return Buffer.concat([head, wire, Buffer.from(ops)]);
    });
}
