// Types of web/glue/room-member.js: the room member core under a caller's socket.
import type { DriverOptions } from './driver.js';

export interface RoomMemberOptions {
  room: string;
  /** Our origin in the room: at most 128 bytes, no control characters. */
  selfId: string;
  /**
   * Our writer as the relay authenticated it (a ticket's writer). Under `ejection: 'writer'` the
   * relay sends every eject to the whole room: with this set, only one naming us is reported.
   */
  writer?: string;
  policyVersion?: number;
  /** The explicit relay transport: envelopes ride tether-env signals; lane events. */
  lanes?: boolean;
  maxMessageBytes?: number;
  maxFrameBytes?: number;
  maxBufferedBytes?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** The jitter's seed (default: random). */
  seed?: number;
}

export type RoomMemberEvent =
  | { kind: 'joined'; members: string[]; reconnect: boolean }
  | { kind: 'member'; origin: string; again: boolean }
  | { kind: 'left'; origin: string }
  | { kind: 'roster'; members: string[] }
  | { kind: 'lane-open'; origin: string }
  | { kind: 'lane-close'; origin: string }
  | { kind: 'text'; origin: string; text: string }
  | { kind: 'signal'; origin: string; text: string }
  | { kind: 'down' }
  | {
      kind: 'refused';
      reason: string;
      text: string;
      fatal: boolean;
      expected?: number;
      /** An eject: the writer it named (ours, or any when the writer option is not set). */
      writer?: string;
    };

export interface RoomMemberHost {
  /** Open a socket to the relay (attempt counts dials since the last welcome, from 1). */
  dial(attempt: number): void;
  /** Send one frame: frame.text() as a string, or frame.view() (its UTF-8 bytes in WASM memory,
   * to be copied before returning) for a socket that takes a text frame as bytes. */
  transmit(frame: { text(): string; view(): Uint8Array }): void;
  hangUp(): void;
  event(e: RoomMemberEvent): void;
}

export type LaneSend =
  'accepted' | 'not-open' | 'too-big' | 'backpressure' | 'frame-too-big' | 'not-utf8';

export interface RoomMember {
  start(): void;
  linkOpen(): void;
  linkMessage(data: string | ArrayBuffer | ArrayBufferView): void;
  linkClosed(): void;
  close(): void;
  sendText(peer: string, text: string, bufferedBytes: number): LaneSend;
  sendSignal(to: string, dataJson: string): boolean;
  /** When the core next wants the clock, or null. */
  nextTimeout(): number | null;
  joined(): boolean;
  laneOpen(peer: string): boolean;
  roster(): string[];
  stats(): {
    reconnects: number;
    sent: number;
    received: number;
    refused: number;
    ignored: number;
    /** read acknowledgements sent (a relay that advertised `readAck`; docs/rooms.md) */
    readAcks: number;
  };
}

/** Loads the module where it cannot load itself (a bundled browser app: pass { wasmModule }). */
export declare function initPeer(options?: {
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
}): Promise<void>;
export declare function memberDefaults(): Readonly<{
  maxMessageBytes: number;
  maxFrameBytes: number;
  maxBufferedBytes: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  maxPeerIdBytes: number;
  envelopeSignalKind: string;
}>;
export declare function meshProtoVersion(): number;
export declare function helloText(o: {
  room: string;
  origin: string;
  policyVersion: number;
  schemaVersion?: number;
  seq?: number;
}): string;
export declare function createRoomMember(
  options: RoomMemberOptions,
  host: RoomMemberHost,
  driverOptions?: DriverOptions,
): RoomMember;
