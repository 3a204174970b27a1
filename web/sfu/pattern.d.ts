// Types of web/sfu/pattern.js: the camera's test pattern, drawn and read back by pixels.

export declare const BITS: number;
export interface PatternLayout {
  width: number;
  height: number;
  cell: number;
  top: number;
  barWidth: number;
  barStep: number;
}
export declare function patternLayout(width: number, height: number): PatternLayout;
export declare function barX(layout: PatternLayout, counter: number): number;
/** A drawer: draw(counter, stampMs) gives the yuv420p frame (one reused buffer). */
export declare function createDrawer(
  layout: PatternLayout,
): (counter: number, stampMs: number) => Uint8Array;
export declare function readPattern(
  rgba: Uint8ClampedArray | Uint8Array,
  width: number,
  height: number,
): { valid: boolean; counter: number; stamp: number; barX: number };
export declare function stampAge(stamp: number, nowMs: number): number;
