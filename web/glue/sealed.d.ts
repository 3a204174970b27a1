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
    | 'crypto';
  peer: string;
}

export interface SealerHost {
  /** A sealed frame to send to peer on the lane. */
  transmit(peer: string, frame: string): void;
  /** A text from peer, authenticated and in order. */
  text(peer: string, text: string): void;
  refused(err: SealedRefusal): void;
}

export interface SealedSuite {
  version: number;
  keyIdBytes: number;
  sessionBytes: number;
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
  /** 'none' when accepted, else why not ('too-big', 'busy', 'malformed', ...). */
  seal(peer: string, text: string): string;
  open(peer: string, frame: string): void;
  maxPlaintext(): number;
  stats(): { sealed: number; opened: number; refused: number };
  close(): void;
}

export declare function createSealer(options: SealerOptions, host: SealerHost): Promise<Sealer>;
export declare function sealedSuite(): SealedSuite;
export declare function sealedMaxPlaintext(laneBytes: number): number;
export declare function sealedSecretError(secret: string | Uint8Array | ArrayBuffer): string;
