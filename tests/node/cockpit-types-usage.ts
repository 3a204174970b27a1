// Compiled by tests/node/cockpit-types.test.mjs under strict settings: consumers of the cockpit's
// packages (the robot SDK, the viewer client, the relay core) type-check against their .d.ts.
import { connectRobot, createTeleopSafety, type RobotEvent } from '@tether-rt/tether/cockpit-robot';
import { connectViewer, type ViewerEvent } from '@tether-rt/tether/cockpit-viewer';
import { loadCockpitRelay, type Action } from '@tether-rt/tether/relay-cockpit';
import { loadWire } from '@tether-rt/tether/wire';

export async function robot(): Promise<void> {
  const r = await connectRobot(
    {
      relay: 'http://127.0.0.1:7780',
      id: 'r1',
      name: 'Rover',
      manifest: { version: 1, channels: [] },
      lane: 'auto',
    },
    {
      event(e: RobotEvent) {
        if (e.kind === 'command') console.log(e.vx, e.cause, e.floor);
        if (e.kind === 'publish') console.log(e.ch, e.payload.length, e.id);
        if (e.kind === 'link' && e.state === 'stopped') console.log(e.code);
      },
    },
  );
  const sent: 'sent' | 'not_welcomed' | 'not_wanted' | 'undeclared' | 'invalid' = r.send(
    'cam',
    new Uint8Array(1),
    { meta: { w: 1 } },
  );
  console.log(sent, r.wants('cam'), r.welcomed, r.command().vx, r.manifest.channels.length);
  r.ack('say', 'r1');
  await r.stop();
}

export async function viewer(mod: object): Promise<void> {
  const wire = await loadWire();
  const v = connectViewer(
    mod,
    wire,
    { version: wire.limits.protocolVersion, wsUrl: 'ws://127.0.0.1:1' },
    {
      event(e: ViewerEvent) {
        if (e.kind === 'state') console.log(e.teleop, e.link.state, e.rttMs);
        if (e.kind === 'manifest') console.log(e.manifest?.panels.length);
      },
      frame: (f) => console.log(f.header.ch, f.payload.length),
    },
  );
  v.start();
  const watched: boolean = v.watch('r1');
  v.want(['cam']);
  const driven: boolean = v.drive(0.5, 0, 0);
  console.log(watched, driven, v.publish('say', new Uint8Array(0), 'm1'), v.lane);
  v.close();
  const s = createTeleopSafety(mod, { watchdogMs: 300 });
  console.log(
    s.handleMessage({ t: 'teleop_start', gen: 1 }, 0),
    s.pollTimeout(),
    s.command().active,
  );
}

export async function relay(): Promise<void> {
  const core = await loadCockpitRelay();
  const id: number = core.handleSessionOpen('viewer', 'websocket', 0);
  for (let a: Action | null = core.pollAction(); a; a = core.pollAction())
    console.log(a.kind, a.bytes?.length, a.code);
  console.log(
    id,
    core.pollTimeout(),
    core.limits.latestStaleMs,
    core.limits.webSocketHighWaterBytes,
  );
}
