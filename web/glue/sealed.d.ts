// Types of web/glue/sealed.js: the sealed channel of the encrypted relay transport.
import type { DriverOptions } from './driver.js';

export interface SealerOptions {
  room: string;
  selfId: string;
  /** The room secret, shared out of band (at least 16 bytes; a string is taken as UTF-8). */
  secret: string | Uint8Array | ArrayBuffer;
  /** The lane's message bound (the member's maxMessageBytes): sealed frames fit it. */
  maxLaneBytes: number;
  /** A WebCrypto (default globalThis.crypto). */
  crypto?: Crypto;
  driverOptions?: DriverOptions;
  /** Golden vectors only: a fixed session (live traffic must keep the random default). */
  session?: Uint8Array;
}

/** Why a frame was refused: `code` is the core's name for it. */
export interface SealedRefusal extends Error {
  code:
    | 'malformed'
    | 'unknown-version'
    | 'wrong-secret'
    | 'tampered'
    | 'replay'
    | 'reorder'
    | 'stale'
    | 'too-big'
    | 'busy'
    | 'unsealed'
    | 'not-ready'
    | 'exhausted'
    | 'crypto'
    | 'wrong-epoch'
    | 'no-epoch';
  peer: string;
}

export interface SealerHost {
  /** A sealed frame to send to peer on the lane: an envelope's text, or the epoch handshake's. */
  transmit(peer: string, frame: string, kind: 'text' | 'hello' | 'answer'): void;
  /** A fresh frame of peer arrived: its epoch is known and seal(peer) accepts. */
  linked?(peer: string): void;
  /** A text from peer, authenticated and in order. */
  text(peer: string, text: string): void;
  refused(err: SealedRefusal): void;
}

export interface SealedSuite {
  version: number;
  keyIdBytes: number;
  sessionBytes: number;
  /** A receiver's epoch (its session) in every frame's header. */
  epochBytes: number;
  /** Where the key id starts in the header. */
  keyIdAt: number;
  headerBytes: number;
  tagBits: number;
  nonceBytes: number;
  keyBits: number;
  hash: string;
  cipher: string;
  replayWindow: number;
  minSecretBytes: number;
  maxSecretBytes: number;
}

export interface Sealer {
  /** 'none' when accepted, else why not ('no-epoch', 'too-big', 'busy', 'malformed', ...). */
  seal(peer: string, text: string): string;
  open(peer: string, frame: string): void;
  /** The lane to peer opened: a hello goes out and peer is not linked until it answers. */
  greet(peer: string): string;
  linked(peer: string): boolean;
  maxPlaintext(): number;
  stats(): {
    sealed: number;
    opened: number;
    refused: number;
    hellosSent: number;
    hellosOpened: number;
  };
  close(): void;
}

export declare function createSealer(options: SealerOptions, host: SealerHost): Promise<Sealer>;
export declare function sealedSuite(): SealedSuite;
export declare function sealedMaxPlaintext(laneBytes: number): number;
export declare function sealedSecretError(secret: string | Uint8Array | ArrayBuffer): string;
