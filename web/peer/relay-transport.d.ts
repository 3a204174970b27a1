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
  /**
   * Our writer as the relay authenticated it (the writer of the ticket in `url`). A relay with
   * `ejection: 'writer'` sends every eject to the whole room: with this set, onError hears only
   * of one naming us; without it, of every one, worded as another writer's.
   */
  writer?: string;
  /** WebSocket constructor; defaults to globalThis.WebSocket (pass `ws` in older Node). */
  WebSocket?: unknown;
  /**
   * 'websocket' (default), or 'http': the same frames over POST and a long-poll, where a
   * WebSocket cannot open (docs/agent-bus.md § HTTP relay transport).
   */
  transport?: 'websocket' | 'http';
  /** fetch for transport 'http'; defaults to globalThis.fetch. */
  fetch?: typeof fetch;
  policyVersion?: number;
  /** Largest control message accepted by send() (default 256 KiB). */
  maxMessageBytes?: number;
  /** Largest relay frame (default 1 MiB, the relays' maxPayload); send() refuses above it. */
  maxFrameBytes?: number;
  /** send() refuses while the socket holds more than this many unsent bytes (default 4 MiB). */
  maxBufferedBytes?: number;
  /**
   * The room secret, shared out of band: every envelope is then sealed end to end (AES-256-GCM,
   * a key from HKDF; docs/agent-bus.md § Encrypted relay transport) and the relay sees only
   * ciphertext. At least 16 bytes; a string is taken as UTF-8. Without it envelopes go in
   * plaintext and `encrypted` is false.
   */
  secret?: string | Uint8Array;
  /** A WebCrypto (default globalThis.crypto). */
  crypto?: Crypto;
  /** Reconnect backoff bounds (defaults 250 ms and 10 s, jittered). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Relay rejections and ejections (the transport keeps reconnecting after a drop). */
  onError?(err: Error): void;
  /**
   * Called once for each connection attempt that did not reach the room, with what the relay
   * (or the network) answered. Reporting only: reconnects go on as scheduled.
   */
  onFailure?(failure: RelayFailure): void;
}

/** Why one connection attempt did not reach the room. */
export type RelayFailure = { attempt: number } & (
  RelayFailureConnect | RelayFailureUpgrade | RelayFailureRejected | RelayFailureClosed
);

/** The socket never opened: `code` is Node's error code (ECONNREFUSED, ENOTFOUND, a TLS code), or null in a browser. */
export interface RelayFailureConnect {
  stage: 'connect';
  code: string | null;
  message: string;
}

/** The relay answered the upgrade with HTTP `status` (the start of its body; Retry-After if sent). */
export interface RelayFailureUpgrade {
  stage: 'upgrade';
  status: number;
  body: string;
  retryAfter: string | null;
}

/** The relay refused our hello (a proto or policy mismatch); the transport stops reconnecting. */
export interface RelayFailureRejected {
  stage: 'rejected';
  reason: string;
  message: string;
}

/** The socket opened, then closed before the welcome. */
export interface RelayFailureClosed {
  stage: 'closed';
  code: number;
  reason: string;
}

export interface RelayTransportStats {
  reconnects: number;
  sent: number;
  received: number;
  refused: number;
  ignored: number;
  /** Encrypted only: frames sealed and opened, refusals, and sealed frames the lane did not take. */
  sealed: {
    sealed: number;
    opened: number;
    refused: number;
    unsent: number;
    /** Epoch handshake frames sent, opened, and lost with their lane (sent again on reopen). */
    hellosSent: number;
    hellosOpened: number;
    hellosUnsent: number;
    /** Peers whose lane is open but whose epoch handshake has not finished: nothing goes to them. */
    awaiting: string[];
  } | null;
}

export interface RelayTransport extends PeerTransport {
  readonly room: string;
  /** Resolves on the first welcome; rejects if the relay refuses the hello or close() comes first. */
  readonly ready: Promise<void>;
  readonly stats: Readonly<RelayTransportStats>;
  /** Whether envelopes are sealed end to end with a room secret (false: the relay reads them). */
  readonly encrypted: boolean;
  /** How frames reach the relay. */
  readonly transport: 'websocket' | 'http';
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
