// A robot camera that streams over WebRTC (docs/webrtc-video.md § Robot camera): for each track
// channel, frames of the test pattern (pattern.js) are drawn here at the camera's rate and piped
// raw into Debian's ffmpeg, which encodes H.264 Constrained Baseline (no B-frames, yuv420p, a
// keyframe every `keyframeInterval` frames) to RTP on a loopback UDP port; this bridge reads the
// packets and sends them on a sendonly track of one werift peer connection. Runs in Node and Deno.
//
// The robot's one offer comes from `offer()` (its SDP and the tracks list, mid -> channel, that
// the cockpit protocol's rtc_offer carries) and the relay's answer goes to `applyAnswer()`.
// `pause(ch)` stops a track's media (the encoder too, as a camera outage would) and `resume(ch)`
// restarts it and reports the gap, so the robot can tell the relay when media comes back after
// one longer than the SFU's collection window (rtc_stalled). Each track's RTP stays one stream
// across restarts: sequence numbers run on and timestamps advance by the gap.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { MediaStreamTrack, RtpPacket } from 'werift';
import { createPeer, keepCandidatesOn } from './peer.js';
import { createDrawer, patternLayout } from './pattern.js';

/** The payload type ffmpeg writes; werift rewrites it to the negotiated one. */
const FFMPEG_PT = 102;
/** RTP payloads below loopback's 64 KiB MTU, as a real network needs. */
const RTP_PACKET_BYTES = 1200;
const RTP_CLOCK_HZ = 90_000;

/**
 * @param {object} o
 * @param {{ch: string, width?: number, height?: number, fps?: number, bitrateKbps?: number, keyframeInterval?: number}[]} o.tracks
 * @param {string|null} [o.address] ICE host address (127.0.0.1); null gathers on every interface
 * @param {object[]} [o.iceServers] from the relay's rtc_ice
 * @param {string} [o.ffmpeg] the ffmpeg binary
 * @param {(event: object) => void} [o.onEvent] {type: 'connection', state} | {type: 'resumed', ch, gapMs} | {type: 'encoder_exit', ch, code, stderr}
 */
export async function createCamera({
  tracks,
  address = '127.0.0.1',
  iceServers = [],
  ffmpeg = 'ffmpeg',
  onEvent = () => {},
}) {
  if (!Array.isArray(tracks) || !tracks.length)
    throw new Error('createCamera: tracks lists at least one {ch}');
  // Under Deno, werift's ICE agent needs the interface list; without it every connection fails
  // quietly after "connecting".
  const sys = { name: 'sys', kind: 'networkInterfaces' };
  const perms = globalThis.Deno?.permissions;
  if (
    perms &&
    perms.querySync(sys).state !== 'granted' &&
    perms.requestSync(sys).state !== 'granted'
  )
    throw new Error(
      'createCamera: Deno denies the network interface list, which WebRTC needs: run with --allow-sys=networkInterfaces',
    );
  const byCh = new Map();
  for (const spec of tracks) {
    if (byCh.has(spec.ch)) throw new Error(`createCamera: channel ${spec.ch} is listed twice`);
    byCh.set(spec.ch, new CameraTrack(spec, ffmpeg, onEvent));
  }
  await Promise.all([...byCh.values()].map((t) => t.open()));
  const track = (ch) =>
    byCh.get(ch) ?? fail(`no camera track ${ch}; the tracks are ${[...byCh.keys()].join(', ')}`);
  let pc = null; // the current peer connection: a fresh one per offer
  let closed = false;

  /** A fresh peer connection for `chs`, replacing any old one; resolves with its offer. */
  async function open({ iceServers: servers = iceServers, chs = [...byCh.keys()] } = {}) {
    if (closed) throw new Error('the camera is closed');
    const list = chs.map(track);
    const old = pc;
    pc = createPeer({ address, iceServers: servers });
    await old?.close().catch(() => {});
    const mine = pc;
    mine.connectionStateChange.subscribe((state) => {
      if (pc === mine) onEvent({ type: 'connection', state });
    });
    for (const t of byCh.values()) t.attach(null);
    for (const t of list) t.attach(mine.addTransceiver(t.attach(), { direction: 'sendonly' }));
    await mine.setLocalDescription(await mine.createOffer());
    return {
      sdp: keepCandidatesOn(mine.localDescription.sdp, address),
      tracks: list.map((t) => ({ mid: t.transceiver.mid, ch: t.ch })),
    };
  }
  async function accept(sdp) {
    if (!pc) throw new Error('the camera has no offer out: open() first');
    await pc.setRemoteDescription({ type: 'answer', sdp });
  }

  return {
    /**
     * A fresh peer connection for the track channels `chs` (all by default) with `iceServers`,
     * closing any old one: the robot SDK's rtc_open (web/glue/cockpit-robot.js). Resolves with
     * its offer: {sdp, tracks: [{mid, ch}]}, as rtc_offer carries it.
     */
    open,
    /** The relay's answer to the last offer (rtc_accept). */
    accept,
    /** The robot's one offer on a fresh connection with every track (open() with its defaults). */
    offer: () => open(),
    /** The relay's answer to that offer. */
    applyAnswer: accept,
    get connectionState() {
      return pc?.connectionState ?? 'new';
    },
    /** Stops a track's media and its encoder (a camera outage). */
    pause: (ch) => track(ch).pause(),
    /** Restarts a track's media; resolves with {ch, gapMs}: how long it carried none. */
    resume: (ch) => track(ch).resume(),
    stats: () => Object.fromEntries([...byCh].map(([ch, t]) => [ch, t.stats()])),
    /** Stops every encoder (by PID), socket and the peer connection. */
    async close() {
      if (closed) return;
      closed = true;
      for (const t of byCh.values()) t.close();
      await pc?.close().catch(() => {});
    },
  };
}

function fail(message) {
  throw new Error(message);
}

class CameraTrack {
  constructor(
    { ch, width = 640, height = 480, fps = 30, bitrateKbps = 1000, keyframeInterval = 30 },
    ffmpeg,
    onEvent,
  ) {
    this.ch = ch;
    this.layout = patternLayout(width, height);
    this.fps = fps;
    this.bitrateKbps = bitrateKbps;
    this.keyframeInterval = keyframeInterval;
    this.ffmpegPath = ffmpeg;
    this.onEvent = onEvent;
    this.draw = createDrawer(this.layout);
    this.track = null; // the sendonly track of the current peer connection, if it carries this one
    this.transceiver = null;
    this.counter = 0;
    this.encoder = null;
    this.timer = null;
    this.running = false;
    this.pausedAt = null;
    // One RTP stream across encoder restarts.
    this.seq = Math.floor(Math.random() * 0x10000);
    this.lastTs = null;
    this.lastPacketAt = null;
    this.tsOffset = 0;
    this.rebase = true;
    this.s = { framesSent: 0, framesSkipped: 0, rtpPackets: 0, rtpBytes: 0, encoderStarts: 0 };
  }

  /**
   * Without an argument: a fresh track for a new peer connection (returned). With its transceiver:
   * the packets go there from now on. With null: nothing carries them.
   */
  attach(transceiver) {
    if (transceiver === undefined) return (this.track = new MediaStreamTrack({ kind: 'video' }));
    this.transceiver = transceiver;
    if (transceiver === null) this.track = null;
    return transceiver;
  }

  async open() {
    this.rtp = createSocket('udp4');
    this.rtcp = createSocket('udp4'); // ffmpeg's sender reports land here and are dropped
    await Promise.all([bind(this.rtp), bind(this.rtcp)]);
    this.rtp.on('message', (buf) => this.onRtp(buf));
    this.rtcp.on('message', () => {});
    this.start();
  }

  onRtp(buf) {
    let packet;
    try {
      packet = RtpPacket.deSerialize(buf);
    } catch {
      return; // not RTP: nothing on this port but our own ffmpeg should send
    }
    const now = Date.now();
    if (this.rebase) {
      // First packet of a (re)started encoder: continue the timeline where the last one stopped.
      const gapTicks =
        this.lastTs === null ? 0 : Math.round(((now - this.lastPacketAt) * RTP_CLOCK_HZ) / 1000);
      this.tsOffset =
        this.lastTs === null ? 0 : (this.lastTs + gapTicks - packet.header.timestamp) >>> 0;
      this.rebase = false;
    }
    packet.header.sequenceNumber = this.seq = (this.seq + 1) & 0xffff;
    packet.header.timestamp = (packet.header.timestamp + this.tsOffset) >>> 0;
    this.lastTs = packet.header.timestamp;
    this.lastPacketAt = now;
    this.s.rtpPackets++;
    this.s.rtpBytes += buf.length;
    this.track?.writeRtp(packet);
  }

  start() {
    const { width, height } = this.layout;
    const kbps = this.bitrateKbps;
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'yuv420p',
      '-s',
      `${width}x${height}`,
      '-framerate',
      String(this.fps),
      '-i',
      'pipe:0',
      '-an',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-tune',
      'zerolatency',
      '-profile:v',
      'baseline',
      '-pix_fmt',
      'yuv420p',
      '-bf',
      '0',
      '-g',
      String(this.keyframeInterval),
      '-keyint_min',
      String(this.keyframeInterval),
      '-b:v',
      `${kbps}k`,
      '-maxrate',
      `${kbps}k`,
      '-bufsize',
      `${Math.max(1, Math.round(kbps / 2))}k`,
      '-f',
      'rtp',
      '-payload_type',
      String(FFMPEG_PT),
      '-pkt_size',
      String(RTP_PACKET_BYTES),
      `rtp://127.0.0.1:${this.rtp.address().port}?rtcpport=${this.rtcp.address().port}`,
    ];
    // `stopping`: we killed it (stopEncoder), so its exit is no event.
    const encoder = Object.assign(
      spawn(this.ffmpegPath, args, { stdio: ['pipe', 'ignore', 'pipe'] }),
      { stopping: false },
    );
    this.encoder = encoder;
    this.s.encoderStarts++;
    this.rebase = true;
    let stderr = '';
    encoder.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    encoder.stdin.on('error', () => {}); // EPIPE when it exits; the exit event reports it
    encoder.on('error', (e) =>
      this.onEvent({
        type: 'encoder_exit',
        ch: this.ch,
        code: null,
        stderr: `could not start ${this.ffmpegPath}: ${e.message} (install Debian's ffmpeg: tools/setup.sh)`,
      }),
    );
    encoder.on('exit', (code, signal) => {
      if (this.encoder === encoder) {
        this.encoder = null;
        this.stopFrames();
        this.pausedAt ??= Date.now();
      }
      if (!encoder.stopping)
        this.onEvent({ type: 'encoder_exit', ch: this.ch, code: code ?? signal, stderr });
    });
    this.running = true;
    const t0 = Date.now();
    const period = 1000 / this.fps;
    let n = 0;
    const tick = () => {
      if (!this.running || this.encoder !== encoder) return;
      // A stalled encoder is not queued for: a frame it cannot take now is skipped, as a camera drops it.
      if (encoder.stdin.writableLength > 2 * this.layout.width * this.layout.height)
        this.s.framesSkipped++;
      else {
        encoder.stdin.write(this.draw(this.counter, Date.now()));
        this.s.framesSent++;
      }
      this.counter = (this.counter + 1) & 0xffff;
      n++;
      this.timer = setTimeout(tick, Math.max(0, t0 + n * period - Date.now()));
    };
    tick();
  }

  stopFrames() {
    this.running = false;
    clearTimeout(this.timer);
  }

  stopEncoder() {
    const e = this.encoder;
    this.encoder = null;
    if (e && e.exitCode === null && e.signalCode === null) {
      e.stopping = true;
      e.stdin.destroy();
      e.kill('SIGKILL');
    }
  }

  pause() {
    if (this.pausedAt !== null && !this.running) return;
    this.stopFrames();
    this.stopEncoder();
    this.pausedAt = Date.now();
  }

  resume() {
    if (this.running && this.encoder) return { ch: this.ch, gapMs: 0 };
    const gapMs = this.lastPacketAt === null ? 0 : Date.now() - this.lastPacketAt;
    this.pausedAt = null;
    this.start();
    const event = { type: 'resumed', ch: this.ch, gapMs };
    this.onEvent(event);
    return { ch: this.ch, gapMs };
  }

  stats() {
    return {
      ...this.s,
      running: this.running,
      counter: this.counter,
      encoderPid: this.encoder?.pid ?? null,
      lastPacketAt: this.lastPacketAt,
    };
  }

  close() {
    this.stopFrames();
    this.stopEncoder();
    for (const s of [this.rtp, this.rtcp]) {
      try {
        s.close();
      } catch {}
    }
  }
}

function bind(socket) {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
}
