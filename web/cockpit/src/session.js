// The cockpit's view of its session with the relay. The session itself is the viewer core
// (src/cockpit/viewer_session.hpp) run by web/glue/cockpit-viewer.js; this file only keeps what the
// core reported in one `state` object for the panels, and hands operator actions to the core.
import { connectViewer } from '../../glue/cockpit-viewer.js';
import { RtcVideo } from './panels/video-rtc.js';

export class ViewerSession {
  #viewer;
  #listener;

  /** The session's one WebRTC peer connection (video panels show its tracks). */
  rtc = new RtcVideo();

  state = {
    link: { state: 'idle' },
    welcomed: false,
    robots: [],
    robotId: null,
    manifest: null,
    manifestError: null, // 'manifestUnsupported' when the robot's manifest is of another version
    teleop: 'idle', // idle | requesting | held | refused
    rttMs: null,
    lastError: null,
    drops: 0,
    frameErrors: 0,
  };

  /**
   * @param {{mod: object, wire: object, info: object, token?: string|null,
   *          listener: (state: object, event?: object) => void, onFrame: (frame: object) => void}} options
   */
  constructor({ mod, wire, info, token = null, listener, onFrame }) {
    this.#listener = listener;
    this.#viewer = connectViewer(mod, wire, info, {
      token,
      webrtc: this.rtc,
      rtcError: (e) => console.warn('tether cockpit: WebRTC', e),
      event: (e) => this.#apply(e),
      frame: onFrame,
      frameError: (error) => {
        this.state.frameErrors++;
        this.#listener(this.state, { type: 'drop', drop: error });
      },
    });
  }

  start() {
    this.rtc.onState = (s) => this.#viewer.rtcState(s);
    this.#viewer.start();
  }

  /** Frames a video panel showed on a track channel since its last report. */
  rtcMedia(ch, frames) {
    this.#viewer.rtcMedia(ch, frames);
  }

  get transport() {
    return this.#viewer.lane;
  }

  #apply(e) {
    const { kind, ...body } = e;
    if (kind === 'state') {
      Object.assign(this.state, body);
      // Closed for good (a final error): the core retries no WebRTC connection either, so the
      // peer connection it would have replaced goes now.
      if (body.link?.state === 'closed') this.rtc.close();
      this.#listener(this.state, { type: 'state' });
    } else if (kind === 'robots') {
      this.state.robots = body.robots;
      this.#listener(this.state, { type: 'robots' });
    } else if (kind === 'manifest') {
      this.state.manifest = body.manifest;
      this.state.manifestError = body.error ?? null;
      this.#listener(this.state, { type: 'manifest' });
    } else if (kind === 'message') {
      this.#listener(this.state, { type: 'message', message: body });
    } else if (kind === 'drop') {
      this.#listener(this.state, { type: 'drop', drop: body });
    }
  }

  // --- operator actions: the core decides what each sends -----------------------------------------
  watch(robotId) {
    if (robotId !== this.state.robotId) this.state.manifest = null;
    this.#viewer.watch(robotId);
  }

  /** Whether the fleet view shows: the relay then adds its link figures to every robot listed. */
  fleetLink(on) {
    this.#viewer.fleetLink(on);
  }

  /** The channels the visible panels (and open raw views) need; the core sends the difference. */
  want(channels) {
    this.#viewer.want(channels);
  }

  teleopStart() {
    this.#viewer.teleopStart();
  }

  teleopStop() {
    this.#viewer.teleopStop();
  }

  /** The command to drive with while the lease is held; the core resends it inside the watchdog. */
  drive(vx, vy, wz) {
    return this.#viewer.drive(vx, vy, wz);
  }

  estop() {
    this.#viewer.estop();
  }

  /** @returns {'sent'|'not_connected'|'no_watch'|'invalid'} */
  publish(ch, payload, id) {
    return this.#viewer.publish(ch, payload, id);
  }

  close() {
    this.#viewer.close();
    this.rtc.close();
  }
}
