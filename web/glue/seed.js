// A seed for a core's generator (common/rng.hpp): the host's randomness goes in once, so the core
// itself stays deterministic. 53 bits, exact as a JS number.
export function randomSeed() {
  const w = new Uint32Array(2);
  globalThis.crypto.getRandomValues(w);
  return (w[0] & 0x1fffff) * 2 ** 32 + w[1];
}
