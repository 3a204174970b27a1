// The seam between the message bus / swarm glue and whatever moves bytes between peers
// (agent-bus-and-swarm.md § WebRTC layers). Implemented by the WebRTC transport (two data
// channels per peer: `control` for envelopes, `x-bin` for raw chunk frames) and by the explicit
// relay transport (the same envelopes carried through the room relay's `signal` messages).
//
// Peer ids are room origins (the room relay's `members` roster is the discovery list).

export type PeerId = string;

export interface PeerTransportEvents {
  /** The control lane to `peer` is open: sends may now be accepted. Flush its backlog here. */
  open?(peer: PeerId): void;
  /** The control lane to `peer` closed (it may reopen later; queue, don't drop). */
  close?(peer: PeerId): void;
  /** One control-lane message (one envelope as JSON text). Untrusted: validate it. */
  text?(peer: PeerId, text: string): void;
  /** One binary-lane message. Untrusted; a frame nobody recognises is ignored. */
  binary?(peer: PeerId, bytes: Uint8Array): void;
  /** The room roster changed: every peer currently in the room, open or not. */
  roster?(peers: readonly PeerId[]): void;
  /** The binary lane to `peer` drained below its low-water mark: more may be sent. */
  drain?(peer: PeerId): void;
  /** The signaling link dropped: hold rebuilds until it is back (the `reconnect` event). */
  signalingDown?(): void;
  /** The signaling link dropped and came back: outstanding requests should be re-planned. */
  reconnect?(): void;
}

export interface PeerTransport {
  /** Our own id in the room. */
  readonly selfId: PeerId;
  /** Peers whose control lane is open now. */
  openPeers(): PeerId[];
  /**
   * Hands one control-lane message to the transport. `false` means it was NOT accepted (lane not
   * open, closed meanwhile, or over the buffer bound): the caller still owns the message.
   */
  send(peer: PeerId, text: string): boolean;
  /** The binary lane; same contract as `send`. */
  sendBinary(peer: PeerId, bytes: Uint8Array): boolean;
  /**
   * True when sendBinary has copied the bytes by the time it returns (RTCDataChannel.send queues
   * a copy), so the caller may reuse them for the next frame. Absent: the transport may keep them.
   */
  readonly copiesBinary?: boolean;
  /** Bytes queued on the binary lane to `peer` (backpressure). */
  bufferedAmount(peer: PeerId): number;
  /** Whether the binary lane to `peer` is open (per-request choice of raw vs base64 chunks). */
  hasBinary(peer: PeerId): boolean;
  /**
   * The largest message `send` takes for `peer`, in bytes: a data channel's negotiated SCTP limit,
   * a relay's frame bound. Optional: a transport without one sets no limit.
   */
  maxMessageSize?(peer: PeerId): number;
  /** Registers handlers; returns the function that removes them. */
  subscribe(handlers: PeerTransportEvents): () => void;
  /** Tears down and reopens the connection to `peer` (a lane that stalled); optional. */
  rebuild?(peer: PeerId): void;
  /** Leaves the room and closes every channel. */
  close(): Promise<void>;
}
