// Types of web/peer/relay-transport.js: the explicit relay transport (envelopes carried in the
// room relay's `signal` messages over one WebSocket).
import type { PeerId, PeerTransport } from './transport.js';

export interface RelayTransportOptions {
  /** ws:// or wss:// URL of the room relay (auth, e.g. a ticket, goes in its query). */
  url: string;
  /** Room name. */
  room: string;
  /** Our origin in the room; peers address us by it. At most 128 bytes, no control characters. */
  selfId: PeerId;
  /** WebSocket constructor; defaults to globalThis.WebSocket (pass `ws` in older Node). */
  WebSocket?: unknown;
  policyVersion?: number;
  /** Largest control message accepted by send() (default 256 KiB). */
  maxMessageBytes?: number;
  /** Largest relay frame (default 1 MiB, the relays' maxPayload); send() refuses above it. */
  maxFrameBytes?: number;
  /** send() refuses while the socket holds more than this many unsent bytes (default 4 MiB). */
  maxBufferedBytes?: number;
  /** Reconnect backoff bounds (defaults 250 ms and 10 s, jittered). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Relay rejections and ejections (the transport keeps reconnecting after a drop). */
  onError?(err: Error): void;
}

export interface RelayTransportStats {
  reconnects: number;
  sent: number;
  received: number;
  refused: number;
  ignored: number;
}

export interface RelayTransport extends PeerTransport {
  readonly room: string;
  /** Resolves on the first welcome; rejects if the relay refuses the hello or close() comes first. */
  readonly ready: Promise<void>;
  readonly stats: Readonly<RelayTransportStats>;
  /** Whether we are in the room right now. */
  isConnected(): boolean;
  /** Every other member of the room (the discovery roster). */
  roster(): PeerId[];
  /** The largest control message send() takes (options.maxMessageBytes). */
  maxMessageSize(peer?: PeerId): number;
  /** Closes the socket as an outage would; the transport reconnects. */
  dropLink(): void;
}

export declare function createRelayTransport(options: RelayTransportOptions): RelayTransport;
