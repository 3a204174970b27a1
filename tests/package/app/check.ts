// tsc --strict --noEmit against the shipped .d.ts: every subpath imported and used with its types.
import { loadWire, type DataFrameHeader, type Wire } from '@tether-rt/tether/wire';
import { loadDecode, type DecodeApi } from '@tether-rt/tether/decode';
import {
  createRelay,
  createRoomClient,
  initRelay,
  pathPrefixAcl,
  type Relay,
  type ServerMsg,
} from '@tether-rt/tether/relay';
import { loadCockpitRelay, type Action } from '@tether-rt/tether/relay-cockpit';
import { connectViewer, loadViewer, type Viewer } from '@tether-rt/tether/cockpit-viewer';
import { initTickets, mintTicket, verifyTicket, type TicketCheck } from '@tether-rt/tether/tickets';
import { loadBus, createBus, type Envelope, type BusApi } from '@tether-rt/tether/bus';
import { loadSwarm, type Swarm, type SwarmAction } from '@tether-rt/tether/swarm';
import { loadMailbox, type MailboxApi } from '@tether-rt/tether/mailbox';
import {
  bytesSource,
  createSwarmPeer,
  createWebRtcTransport,
  type PeerTransport,
  type SwarmPeer,
} from '@tether-rt/tether/peer';
import { nodeFolder, fileSource, type NodeFolder } from '@tether-rt/tether/peer/node';

export async function typed(transport: PeerTransport): Promise<number> {
  const wire: Wire = await loadWire();
  const header: DataFrameHeader = { ch: 'odom', seq: 1, ts: 0, delivery: 'latest' };
  const enc = wire.encodeDataFrame(header, new Uint8Array(1));
  const size: number = enc.ok ? enc.bytes.length : enc.error.message.length;
  const decode: DecodeApi = await loadDecode();
  const kind: string = decode.encodingKind('costmap.zlib.v1');
  await initRelay();
  const relay: Relay = createRelay({
    policy: pathPrefixAcl([{ prefix: ['notes'], allow: (ctx) => ctx.kind !== 'agent' }]),
  });
  const client = createRoomClient({ room: 'lab', origin: 'o', writer: 'w' });
  const inbox: ServerMsg[] = [];
  relay
    .connect({ send: (m) => inbox.push(m) }, { writer: 'w' })
    .receive(JSON.parse(client.hello()));
  const cockpit = await loadCockpitRelay();
  const action: Action | null = cockpit.pollAction();
  const deadline: number | null = cockpit.pollTimeout();
  const { mod, wire: viewerWire } = await loadViewer();
  const viewer: Viewer = connectViewer(mod, viewerWire, { version: 7, wsUrl: 'ws://127.0.0.1:1/' });
  viewer.close();
  await initTickets(); // what a Worker does with { wasmModule } (web/edge/init.js)
  const ticket: string = await mintTicket('x'.repeat(32), { writer: 'w', room: 'lab' });
  const checked: TicketCheck = await verifyTicket('x'.repeat(32), ticket, { room: 'lab' });
  const busApi: BusApi = await loadBus();
  const parsed = busApi.parseEnvelope('{}');
  const envelope: Envelope | null = parsed.ok ? parsed.envelope : null;
  const bus = await createBus({
    self: { streamId: 's', role: 'agent', name: 'n', instanceId: 'i' },
    transport,
  });
  const mailbox: MailboxApi = await loadMailbox();
  const door = mailbox.frontDoor('POST', '/mailboxes', -1, false);
  const swarm: Swarm = await loadSwarm();
  const pending: SwarmAction[] = [];
  const peer: SwarmPeer = createSwarmPeer({ swarm, transport });
  const shared = await peer.share({ name: 'f', source: bytesSource(new Uint8Array(3)) });
  const folder: NodeFolder = await nodeFolder('/tmp/x');
  const source = await fileSource('/tmp/x/f');
  const rtc: PeerTransport = createWebRtcTransport({
    url: 'ws://127.0.0.1:1/rooms/x',
    room: 'x',
    selfId: 'a',
  });
  bus.close();
  return (
    size +
    kind.length +
    inbox.length +
    (action ? 1 : 0) +
    (deadline ?? 0) +
    (checked.ok ? 1 : 0) +
    (envelope ? 1 : 0) +
    pending.length +
    (door.ok ? 1 : 0) +
    shared.fileId.length +
    folder.key.length +
    source.size +
    rtc.openPeers().length
  );
}
