// Types of `@tether-rt/tether/cockpit-viewer` (web/glue/full/cockpit-viewer.js): the viewer client
// (web/glue/cockpit-viewer.d.ts) and the loader of the module it runs on.
import type { LoadOptions, TetherModule } from '../load.js';
import type { Wire } from '../wire.js';

export * from '../cockpit-viewer.js';

/** Loads the module the viewer session runs on and its wire codec, for connectViewer(mod, wire, ...). */
export function loadViewer(options?: LoadOptions): Promise<{ mod: TetherModule; wire: Wire }>;
