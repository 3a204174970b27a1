// Panel kinds by name (cockpit-wire-protocol.md § Manifest); anything else renders as unknown.
import { VideoPanel } from './video.js';
import { Map2dPanel } from './map2d.js';
import { Map3dPanel } from './map3d-lazy.js';
import { TeleopPanel } from './teleop.js';
import { ChatPanel } from './chat.js';
import { StatsPanel } from './stats.js';
import { UnknownPanel } from './unknown.js';
import { lazyPanel } from './lazy-panel.js';

// Kinds the first paint seldom shows load when a manifest first shows one (uPlot with the plot).
const PlotPanel = lazyPanel(() => import('./plot.js').then((m) => m.PlotPanel), 'the plot');
const EventLogPanel = lazyPanel(
  () => import('./event-log.js').then((m) => m.EventLogPanel),
  'the event log',
);

const KINDS = {
  video: VideoPanel,
  map2d: Map2dPanel,
  map3d: Map3dPanel,
  teleop: TeleopPanel,
  chat: ChatPanel,
  stats: StatsPanel,
  'event-log': EventLogPanel,
  plot: PlotPanel,
};

export function createPanel(ctx) {
  const Kind = KINDS[ctx.panel.kind] ?? UnknownPanel;
  return new Kind(ctx);
}
