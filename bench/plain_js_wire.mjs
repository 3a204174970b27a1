// The baseline `make bench` compares against: cockpit v7 data frames written the way a typical
// JavaScript client would write them by hand, with DataView, TextEncoder/TextDecoder and JSON.
// It is a yardstick, not a codec: the project's only encoder and decoder is the C++ core
// (DESIGN.md rule 5).
//
// What it checks, and what it leaves out, compared with src/wire:
// - decode checks the two lengths against the buffer and that the header is JSON. It does not
//   reject invalid UTF-8 (TextDecoder replaces it), does not check the header's fields, key set,
//   channel length, seq range or the 64 KiB / 64 MiB bounds, and does not bound JSON depth.
// - encode writes the header keys in wire order and checks nothing.
// - the decoded payload is a subarray of the input (a view, no copy), which is what a typical
//   hand-written decoder does; a consumer that keeps it must not reuse the input buffer.
// So plain JS does strictly less work per frame than the core; the bench prints this caveat.

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/** header: {ch, seq, ts, delivery, meta?}; payload: Uint8Array. Returns the frame bytes. */
export function encodeDataFrame(header, payload) {
  // A fresh object literal fixes the key order whatever order the caller used.
  const wire = { ch: header.ch, seq: header.seq, ts: header.ts, delivery: header.delivery };
  if (header.meta !== undefined) wire.meta = header.meta;
  const headerBytes = textEncoder.encode(JSON.stringify(wire));
  const out = new Uint8Array(8 + headerBytes.length + payload.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, headerBytes.length, true);
  dv.setUint32(4, payload.length, true);
  out.set(headerBytes, 8);
  out.set(payload, 8 + headerBytes.length);
  return out;
}

function dataViewOf(bytes) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes a buffer holding exactly one frame. Returns {header, payload} or null. */
export function decodeDataFrame(bytes) {
  if (bytes.length < 8) return null;
  const dv = dataViewOf(bytes);
  const headerLen = dv.getUint32(0, true);
  const payloadLen = dv.getUint32(4, true);
  if (8 + headerLen + payloadLen !== bytes.length) return null;
  let header;
  try {
    header = JSON.parse(textDecoder.decode(bytes.subarray(8, 8 + headerLen)));
  } catch {
    return null;
  }
  return { header, payload: bytes.subarray(8 + headerLen) };
}

/**
 * Reassembles frames from arbitrary chunks. Chunks are only joined once they hold the whole next
 * frame, so a big frame arriving in many reads is copied once, not once per read.
 */
export class DataFrameStream {
  #parts = [];
  #size = 0;
  #need = 8; // bytes the next frame needs: its prefix, then the whole frame

  /** Returns the frames the chunks so far completed (null on a header that is not JSON). */
  push(chunk) {
    this.#parts.push(chunk);
    this.#size += chunk.length;
    if (this.#size < this.#need) return [];
    const ours = this.#parts.length > 1;
    const buf = ours ? join(this.#parts, this.#size) : chunk;
    const dv = dataViewOf(buf);
    const frames = [];
    let at = 0;
    this.#need = 8;
    while (buf.length - at >= 8) {
      const headerLen = dv.getUint32(at, true);
      const payloadLen = dv.getUint32(at + 4, true);
      const end = at + 8 + headerLen + payloadLen;
      if (end > buf.length) {
        this.#need = end - at;
        break;
      }
      let header;
      try {
        header = JSON.parse(textDecoder.decode(buf.subarray(at + 8, at + 8 + headerLen)));
      } catch {
        return null;
      }
      frames.push({ header, payload: buf.subarray(at + 8 + headerLen, end) });
      at = end;
    }
    // Keep the tail; copy it when it is the caller's chunk, which may be reused after we return.
    const tail = ours ? buf.subarray(at) : buf.slice(at);
    this.#parts = tail.length > 0 ? [tail] : [];
    this.#size = tail.length;
    return frames;
  }
}

function join(parts, size) {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
