// Runtime-neutral body of the wire smoke tests: runs in Chromium, Deno and workerd, so it uses
// only web-platform globals (atob/btoa, Uint8Array). It reports raw results back to the Node test,
// which checks them against the fixtures it reads from disk itself: the runtime under test never
// grades its own work.

export function fromBase64(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toBase64(bytes) {
  let bin = '';
  // Chunked so a large payload does not overflow the argument limit of fromCharCode.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Decodes one frame and re-encodes what came out; a plain-JSON report of both steps. */
export function roundTrip(wire, frame) {
  const decoded = wire.decodeDataFrame(frame);
  if (!decoded.ok) return { ok: false, error: decoded.error };
  const encoded = wire.encodeDataFrame(decoded.header, decoded.payload);
  return {
    ok: true,
    header: decoded.header,
    payload_b64: toBase64(decoded.payload),
    reencoded_b64: encoded.ok ? toBase64(encoded.bytes) : null,
    reencodeError: encoded.ok ? null : encoded.error,
    sameBytes: encoded.ok && sameBytes(encoded.bytes, frame),
  };
}

/**
 * Runs every valid and invalid vector of each fixture set.
 * @param {object} wire the API from loadWire()
 * @param {Record<string, {vectors: object[], invalid?: object[]}>} sets fixture files by name
 */
export function runVectors(wire, sets) {
  const results = [];
  for (const [set, file] of Object.entries(sets)) {
    for (const v of file.vectors) {
      results.push({
        set,
        name: v.name,
        kind: 'valid',
        ...roundTrip(wire, fromBase64(v.frame_b64)),
      });
    }
    for (const v of file.invalid ?? []) {
      results.push({
        set,
        name: v.name,
        kind: 'invalid',
        ...roundTrip(wire, fromBase64(v.frame_b64)),
      });
    }
  }
  return results;
}
