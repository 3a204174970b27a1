// map3d, loaded when a manifest first shows one: three.js is most of the cockpit's JavaScript and
// the first paint never needs it (bench/README.md § Module size).
import { lazyPanel } from './lazy-panel.js';

export const Map3dPanel = lazyPanel(
  () => import('./map3d.js').then((m) => m.Map3dPanel),
  'the 3D map',
);
