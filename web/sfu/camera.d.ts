// Types of web/sfu/camera.js: the robot camera that streams H.264 over WebRTC.

export interface CameraTrackSpec {
  /** The track channel it carries (manifest encoding video.webrtc.v1). */
  ch: string;
  /** A multiple of 32 (the test pattern's cells); 640 by default. */
  width?: number;
  height?: number;
  fps?: number;
  bitrateKbps?: number;
  /** Frames between keyframes (ffmpeg -g); 30 by default. */
  keyframeInterval?: number;
}

export type CameraEvent =
  | { type: 'connection'; state: string }
  | { type: 'resumed'; ch: string; gapMs: number }
  | { type: 'encoder_exit'; ch: string; code: number | string | null; stderr: string };

export interface CameraTrackStats {
  framesSent: number;
  framesSkipped: number;
  rtpPackets: number;
  rtpBytes: number;
  encoderStarts: number;
  running: boolean;
  counter: number;
  encoderPid: number | null;
  lastPacketAt: number | null;
}

export interface CameraOffer {
  sdp: string;
  tracks: { mid: string; ch: string }[];
}

export interface Camera {
  /**
   * A fresh peer connection for the track channels `chs` (all by default) with `iceServers`,
   * closing any old one (the robot SDK's rtc_open): its offer, SDP with candidates and which mid
   * carries which channel (rtc_offer's tracks).
   */
  open(options?: {
    iceServers?: { urls: string | string[]; username?: string; credential?: string }[];
    chs?: string[];
  }): Promise<CameraOffer>;
  /** The relay's answer to the last offer (rtc_accept). */
  accept(sdp: string): Promise<void>;
  /** open() with its defaults. */
  offer(): Promise<CameraOffer>;
  applyAnswer(sdp: string): Promise<void>;
  readonly connectionState: string;
  /** Stops a track's media and its encoder. */
  pause(ch: string): void;
  /** Restarts a track's media; gapMs is how long it carried none (compare with the core's window for rtc_stalled). */
  resume(ch: string): { ch: string; gapMs: number };
  stats(): Record<string, CameraTrackStats>;
  /** Stops every encoder (by PID), socket and the peer connection. */
  close(): Promise<void>;
}

export declare function createCamera(options: {
  tracks: CameraTrackSpec[];
  /** ICE host address; 127.0.0.1 by default, null for every interface. */
  address?: string | null;
  iceServers?: { urls: string | string[]; username?: string; credential?: string }[];
  ffmpeg?: string;
  onEvent?: (event: CameraEvent) => void;
}): Promise<Camera>;
