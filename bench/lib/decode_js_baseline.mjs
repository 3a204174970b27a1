// The plain-JS baseline the decode benchmark measures WASM against: fflate's inflate plus a JS
// loop, doing the same work as the C++ decoders (palette lookup into a north-up RGBA image;
// Float32 voxel centres and colours). It checks less than the core does (no bomb guard while
// inflating: fflate inflates fully, then we compare sizes).
import { unzlibSync } from 'fflate';

export function makePalette(entries) {
  const p = new Uint32Array(256);
  for (let v = 0; v < 256; v++) {
    const [r, g, b, a] = entries(v);
    p[v] = ((a << 24) | (b << 16) | (g << 8) | r) >>> 0;
  }
  return p;
}

export function decodeCostmapJs(payload, meta, palette) {
  const cells = unzlibSync(payload);
  if (cells.length !== meta.w * meta.h) throw new Error('size mismatch');
  const rgba = new Uint32Array(meta.w * meta.h);
  for (let row = 0; row < meta.h; row++) {
    const src = (meta.h - 1 - row) * meta.w;
    const dst = row * meta.w;
    for (let col = 0; col < meta.w; col++) rgba[dst + col] = palette[cells[src + col]];
  }
  return rgba;
}

export function decodeVoxelsJs(payload, meta, ramp) {
  const records = unzlibSync(payload);
  if (records.length !== meta.n * 7) throw new Error('size mismatch');
  const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
  const positions = new Float32Array(meta.n * 3);
  const colours = new Float32Array(meta.n * 3);
  const half = meta.res / 2;
  for (let i = 0; i < meta.n; i++) {
    const o = i * 7;
    positions[3 * i] = meta.origin[0] + half + meta.res * view.getInt16(o, true);
    positions[3 * i + 1] = meta.origin[1] + half + meta.res * view.getInt16(o + 2, true);
    positions[3 * i + 2] = meta.origin[2] + half + meta.res * view.getInt16(o + 4, true);
    const c = records[o + 6] * 3;
    colours[3 * i] = ramp[c];
    colours[3 * i + 1] = ramp[c + 1];
    colours[3 * i + 2] = ramp[c + 2];
  }
  return { positions, colours };
}
