// A viewer of the local SFU for the e2e tests and the bench: one recvonly peer connection, as the
// cockpit's will be, whose signaling the Node side carries to the SFU API (as the relay does).
// Every decoded frame (requestVideoFrameCallback) of every track is drawn to a canvas and its
// test pattern read back by pixels (web/sfu/pattern.js); window.viewer reports what it saw.
import { readPattern, stampAge } from '/web/sfu/pattern.js';

const pc = new RTCPeerConnection({ iceServers: [] });
pc.addTransceiver('video', { direction: 'recvonly' });
const tracks = new Map(); // mid -> what its video showed
const LATENCY_SAMPLES = 2000;

function watch(mid, track) {
  const video = document.createElement('video');
  Object.assign(video, { muted: true, autoplay: true, playsInline: true });
  video.dataset.mid = mid;
  video.srcObject = new MediaStream([track]);
  document.querySelector('#videos').append(video);
  const canvas = document.createElement('canvas');
  const g = canvas.getContext('2d', { willReadFrequently: true });
  const seen = {
    mid,
    frames: 0,
    valid: 0,
    invalid: 0,
    first: null,
    last: null,
    counters: [],
    latencies: [],
    receiveLatencies: [],
  };
  tracks.set(mid, seen);
  const onFrame = (now, meta) => {
    seen.frames++;
    const w = video.videoWidth;
    const h = video.videoHeight;
    if (w && h) {
      if (canvas.width !== w || canvas.height !== h) Object.assign(canvas, { width: w, height: h });
      g.drawImage(video, 0, 0, w, h);
      let p = null;
      try {
        p = readPattern(g.getImageData(0, 0, w, h).data, w, h);
      } catch {
        // a size the pattern does not fit: counted as invalid
      }
      if (p?.valid) {
        seen.valid++;
        const at = performance.timeOrigin + meta.presentationTime;
        const frame = { counter: p.counter, barX: p.barX, width: w, height: h, at };
        seen.first ??= frame;
        seen.last = frame;
        if (seen.counters.length < LATENCY_SAMPLES) seen.counters.push(p.counter);
        if (seen.latencies.length < LATENCY_SAMPLES) {
          seen.latencies.push(stampAge(p.stamp, at));
          if (meta.receiveTime)
            seen.receiveLatencies.push(
              stampAge(p.stamp, performance.timeOrigin + meta.receiveTime),
            );
        }
      } else seen.invalid++;
    }
    video.requestVideoFrameCallback(onFrame);
  };
  video.requestVideoFrameCallback(onFrame);
}

pc.ontrack = (e) => watch(e.transceiver.mid, e.track);

// Non-trickle signaling: the description goes out once its candidates are in it.
const gathered = () =>
  pc.iceGatheringState === 'complete'
    ? Promise.resolve()
    : new Promise((resolve) =>
        pc.addEventListener(
          'icegatheringstatechange',
          () => pc.iceGatheringState === 'complete' && resolve(),
        ),
      );

window.viewer = {
  async offer() {
    await pc.setLocalDescription();
    await gathered();
    return pc.localDescription.sdp;
  },
  applyAnswer: (sdp) => pc.setRemoteDescription({ type: 'answer', sdp }),
  async answer(sdp) {
    await pc.setRemoteDescription({ type: 'offer', sdp });
    await pc.setLocalDescription();
    await gathered();
    return pc.localDescription.sdp;
  },
  /** Stops `mid`'s transceiver and returns the offer that says so (a negotiated tracks/close). */
  async closeOffer(mid) {
    pc.getTransceivers()
      .find((t) => t.mid === mid)
      .stop();
    await pc.setLocalDescription();
    await gathered();
    return pc.localDescription.sdp;
  },
  /** A track's frames so far (null until it has a track). */
  seen: (mid) => tracks.get(mid) ?? null,
  connectionState: () => pc.connectionState,
  close: () => pc.close(),
};
