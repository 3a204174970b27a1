import type { LoadOptions } from './load.js';

export type EncodingKind =
  'jpeg' | 'costmap' | 'voxels' | 'pose' | 'json' | 'track' | 'unsupported';
export type DecodeErrorCode =
  | 'bad_meta'
  | 'payload_too_large'
  | 'not_zlib'
  | 'too_much_data'
  | 'too_little_data'
  | 'trailing_bytes'
  | 'not_jpeg'
  | 'invalid_json'
  | 'bad_shape';

export type DecodeResult =
  { ok: true } | { ok: false; error: { code: DecodeErrorCode; message: string } };

export interface CostmapValue {
  meta: { w: number; h: number; res: number; origin: [number, number, number] };
  /** w*h cells, row 0 at world min-y. A view of WASM memory. */
  cells: Uint8Array;
  /** w*h*4 RGBA, row 0 at world max-y. A view of WASM memory. */
  rgba: Uint8ClampedArray;
}
export interface VoxelValue {
  positions: Float32Array;
  colours: Float32Array;
}
export interface JpegValue {
  meta: { w: number; h: number };
  bytes: Uint8Array;
}
export interface Pose {
  x: number;
  y: number;
  z: number;
  yaw: number;
  ts: number;
}

export declare class ChannelDecoder {
  constructor(encoding: string);
  readonly kind: EncodingKind;
  decode(meta: unknown, payload: Uint8Array): DecodeResult;
  readonly frames: number;
  readonly errors: number;
  readonly lastError: DecodeErrorCode | null;
  /** The last good value; views stay valid until the next call into the module. */
  readonly value: CostmapValue | VoxelValue | JpegValue | Pose | unknown | null;
  close(): void;
}

export interface DecodeApi {
  ChannelDecoder: typeof ChannelDecoder;
  encodingKind(encoding: string): EncodingKind;
  errorTexts: Record<DecodeErrorCode, string>;
}

export declare function loadDecode(options?: LoadOptions): Promise<DecodeApi>;
export declare function createDecode(module: unknown): DecodeApi;
