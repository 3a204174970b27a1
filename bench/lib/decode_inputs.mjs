// The decode benchmark's inputs, made the same way as bench/decode_native.cpp makes them: a
// 2048x2048 costmap and a 1M-voxel frame, zlib-compressed at level 6.
import { deflateSync } from 'node:zlib';

export const SIDE = 2048;
export const VOXELS = 1 << 20;

export function costmapPayload() {
  const cells = new Uint8Array(SIDE * SIDE);
  for (let i = 0; i < cells.length; i++) {
    const x = i % SIDE;
    const y = (i / SIDE) | 0;
    cells[i] = ((x >> 6) + (y >> 6)) % 9 === 0 ? 255 : (x * 7 + y * 3) % 101;
  }
  return deflateSync(cells, { level: 6 });
}

export function voxelPayload() {
  const records = new Uint8Array(VOXELS * 7);
  const view = new DataView(records.buffer);
  for (let i = 0; i < VOXELS; i++) {
    view.setUint16(i * 7, i % 128, true);
    view.setUint16(i * 7 + 2, (i >> 7) % 128, true);
    view.setUint16(i * 7 + 4, i >> 14, true);
    records[i * 7 + 6] = (i * 13) & 255;
  }
  return deflateSync(records, { level: 6 });
}

export const costmapMeta = { w: SIDE, h: SIDE, res: 0.05, origin: [0, 0, 0] };
export const voxelMeta = { n: VOXELS, res: 0.1, origin: [0, 0, 0] };
