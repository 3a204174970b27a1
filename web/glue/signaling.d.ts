// Types of web/glue/signaling.js: the signaling negotiation core between two peers.
import type { DriverOptions } from './driver.js';

export type CandidateInit = {
  candidate: string;
  sdpMid: string | null;
  sdpMLineIndex: number | null;
};

export type SignalingAction =
  | { kind: 'create'; peer: string; gen: string; offerer: boolean }
  | { kind: 'offer'; peer: string; gen: string }
  | { kind: 'answer'; peer: string; gen: string; sdp: string }
  | { kind: 'accept'; peer: string; gen: string; sdp: string }
  | { kind: 'candidate'; peer: string; gen: string; candidate: CandidateInit }
  | { kind: 'close'; peer: string; gen: string }
  | { kind: 'signal'; peer: string; data: string };

export type SignalingEvent =
  | { kind: 'open'; peer: string }
  | { kind: 'close'; peer: string }
  | { kind: 'roster'; roster: string[] }
  | { kind: 'reconnect' }
  | { kind: 'signaling-down' };

export interface SignalingHost {
  perform(action: SignalingAction): void;
  event(event: SignalingEvent): void;
}

export interface Signaling {
  welcome(members: string[]): void;
  roster(members: string[]): void;
  signalingDown(): void;
  signal(from: string, dataJson: string): void;
  description(peer: string, gen: string, sdp: string): void;
  remoteSet(peer: string, gen: string): void;
  failed(peer: string, gen: string): void;
  localCandidate(
    peer: string,
    gen: string,
    c: { candidate: string; sdpMid?: string | null; sdpMLineIndex?: number | null },
  ): void;
  channelsOpen(peer: string, gen: string): void;
  channelClosed(peer: string, gen: string): void;
  connectionState(peer: string, gen: string, state: string): void;
  rebuild(peer: string): void;
  close(): void;
  nextTimeout(): number | null;
  isOpen(peer: string): boolean;
  signalingUp(): boolean;
  stats(): {
    offers: number;
    answers: number;
    rebuilds: number;
    signalingReconnects: number;
    refusedSignals: number;
    peers: number;
  };
}

export declare function signalingLimits(): Readonly<{
  openTimeoutMs: number;
  maxPeerIdBytes: number;
  maxGenerationBytes: number;
  maxSessionDescriptionBytes: number;
  maxCandidateBytes: number;
  maxPendingCandidates: number;
  controlChannelId: number;
  controlChannelLabel: string;
  binaryChannelId: number;
  binaryChannelLabel: string;
  defaultChannelMessageBytes: number;
  controlBufferLimit: number;
  binaryBufferLimit: number;
  binaryLowWater: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}>;
export declare function createSignaling(
  options: { selfId: string; seed?: number; openTimeoutMs?: number },
  host: SignalingHost,
  driverOptions?: DriverOptions,
): Signaling;
