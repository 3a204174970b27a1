// One SFU session: one werift peer connection, the tracks it publishes (local tracks) and the
// tracks it pulls from other sessions (remote tracks), and the RTP forwarding between them
// (docs/webrtc-video.md § Media). Cloudflare Realtime's model: a session is a PeerConnection; a
// published track is named by (sessionId, trackName); a pull gets its own transceiver (mid) on the
// pulling session.
//
// Forwarding is per subscriber: a received packet loses its header extensions (their ids are per
// connection) and is serialised once, and each subscriber's sender gets its own copy (werift's
// sender rewrites SSRC, payload type, sequence and timestamp in place and keeps the object in its
// NACK cache). A subscriber's picture loss indication is passed on to the publisher, and a
// subscriber that becomes ready asks the publisher for a keyframe once.
import { MediaStreamTrack, RtpPacket } from 'werift';
import { ApiError, fail } from './errors.js';
import {
  createPeer,
  localDescription,
  sdpDirection,
  sdpMids,
  videoSectionProblem,
} from './peer.js';

export class Session {
  constructor(sfu, id, appId) {
    this.sfu = sfu;
    this.id = id;
    this.appId = appId;
    this.createdAt = sfu.now();
    this.pc = null;
    this.closed = false;
    this.connected = false;
    this.notConnectedSince = this.createdAt; // for the idle window (Sfu.sweep)
    this.publications = new Map(); // trackName -> Publication (local tracks)
    this.publicationByMid = new Map(); // mid -> Publication
    this.pulls = new Map(); // mid -> Pull (remote tracks on this session; werift may reuse a stopped mid)
    this.senders = new Set(); // every pull's sender, to stop at the end
    this.receivers = new Map(); // mid -> {track, receiver}: what werift has received so far
    this.droppedPackets = 0; // packets on a mid with no active publication
    this.queue = Promise.resolve();
  }

  /** Runs `fn` after every earlier operation on this session: werift must see one SDP change at a time. */
  run(fn) {
    const result = this.queue.then(() => {
      if (this.closed)
        fail(
          'session_error',
          `session ${this.id} was closed while this request waited: create a new session`,
        );
      return fn();
    });
    this.queue = result.catch(() => {});
    return result;
  }

  peer() {
    if (this.pc) return this.pc;
    const pc = createPeer({ address: this.sfu.mediaAddress });
    this.pc = pc;
    pc.ontrack = ({ track, transceiver }) => {
      const mid = transceiver.mid;
      if (this.receivers.get(mid)?.track === track) return; // one listener per track, however often it is announced
      this.receivers.set(mid, { track, receiver: transceiver.receiver });
      track.onReceiveRtp.subscribe((rtp) => this.forward(mid, rtp));
      const pub = this.publicationByMid.get(mid);
      if (pub?.status === 'active' && pub.subscribers.size) this.sfu.requestKeyframe(pub);
    };
    pc.connectionStateChange.subscribe((state) => {
      const connected = state === 'connected';
      if (connected === this.connected) return;
      this.connected = connected;
      this.notConnectedSince = connected ? null : this.sfu.now();
      this.sfu.log(`session ${this.id} ${state}`);
      if (connected)
        for (const pull of this.pulls.values())
          if (pull.ready && pull.status === 'active') this.sfu.requestKeyframe(pull.publication);
    });
    return pc;
  }

  // --- the hot path --------------------------------------------------------------------------
  forward(mid, rtp) {
    const pub = this.publicationByMid.get(mid);
    if (!pub || pub.status !== 'active') {
      this.droppedPackets++;
      return;
    }
    pub.lastMediaAt = this.sfu.now();
    pub.packetsIn++;
    pub.bytesIn += rtp.payload.length;
    if (!pub.subscribers.size) return;
    const clean = RtpPacket.deSerialize(rtp.serialize());
    clean.header.extensions = [];
    clean.header.extension = false;
    const bytes = clean.serialize();
    for (const pull of pub.subscribers) {
      if (!pull.ready) continue;
      pull.track.writeRtp(bytes); // a Buffer: werift deserialises a fresh packet per sender
      pull.packetsOut++;
    }
  }

  // --- publish (local tracks) ---------------------------------------------------------------
  /** tracks/new with local tracks: applies the endpoint's offer (if any) and answers it. */
  async publish(offer, tracks) {
    const known = new Set(this.pc?.remoteDescription ? sdpMids(this.pc.remoteDescription.sdp) : []);
    const offered = offer ? new Set(sdpMids(offer.sdp)) : known;
    for (const t of tracks) {
      if (offer && offered.has(t.mid)) {
        const problem = videoSectionProblem(offer.sdp, t.mid);
        if (problem) fail('invalid_session_description', `track ${t.trackName}: ${problem}`);
        const direction = sdpDirection(offer.sdp, t.mid);
        if (direction !== 'sendonly' && direction !== 'sendrecv')
          fail(
            'invalid_params',
            `track ${t.trackName}: mid ${t.mid} is ${direction} in the offer; a published track's transceiver sends (sendonly)`,
          );
      }
      if (!offered.has(t.mid))
        fail(
          'invalid_params',
          offer
            ? `track ${t.trackName}: mid ${t.mid} is not a media section of the offer; name the mid of its sendonly transceiver`
            : `track ${t.trackName}: mid ${t.mid} was never negotiated on this session; send the endpoint's offer in sessionDescription`,
        );
      const existing = this.publications.get(t.trackName);
      if (existing && existing.mid !== t.mid && existing.status === 'active')
        fail(
          'invalid_params',
          `track ${t.trackName} is already published on mid ${existing.mid} of this session: close it first or pick another trackName`,
        );
      const onMid = this.publicationByMid.get(t.mid);
      if (onMid && onMid.trackName !== t.trackName && onMid.status === 'active')
        fail(
          'invalid_params',
          `mid ${t.mid} already carries track ${onMid.trackName}: close it first`,
        );
    }
    const answer = offer ? await this.answer(offer) : null;
    for (const t of tracks) this.declare(t.mid, t.trackName);
    const body = {
      requiresImmediateRenegotiation: false,
      tracks: tracks.map((t) => ({ trackName: t.trackName, mid: t.mid })),
    };
    if (answer) body.sessionDescription = answer;
    return body;
  }

  /** Applies the endpoint's offer and returns the SFU's answer. */
  async answer(offer) {
    const pc = this.peer();
    await setRemote(pc, offer);
    return localDescription(pc, this.sfu.mediaAddress, 'answer');
  }

  /** (Re)declares a publication: a track collected for lack of media comes back with no subscriber. */
  declare(mid, trackName) {
    const old = this.publications.get(trackName);
    if (old && old.status === 'active' && old.mid === mid) return old;
    if (old) this.sfu.collect(old, 'declared again');
    const pub = new Publication(this, mid, trackName);
    this.publications.set(trackName, pub);
    this.publicationByMid.set(mid, pub);
    this.sfu.log(`session ${this.id} publishes ${trackName} on mid ${mid}`);
    return pub;
  }

  // --- pull (remote tracks) -----------------------------------------------------------------
  /** tracks/new with remote tracks: a sendonly transceiver per found track, and the SFU's offer. */
  async pull(requests) {
    if (this.pc && this.pc.signalingState !== 'stable')
      fail(
        'invalid_session_description',
        `session ${this.id} has an SFU offer waiting for its answer: PUT .../renegotiate with the endpoint's answer before adding tracks`,
      );
    if (this.pulls.size + requests.length > this.sfu.maxTracksPerSession)
      fail(
        'invalid_params',
        `session ${this.id} already holds ${this.pulls.size} pulled tracks and this SFU allows ${this.sfu.maxTracksPerSession} per session: create a new session`,
      );
    const results = [];
    const added = [];
    for (const r of requests) {
      const pub = this.sfu.findPublication(this.appId, r.sessionId, r.trackName);
      if (!pub) {
        results.push({
          sessionId: r.sessionId,
          trackName: r.trackName,
          errorCode: 'not_found_track_error',
          errorDescription: `no active track ${r.trackName} on session ${r.sessionId}: publish it (tracks/new with a local track) and retry; a track is collected after ${this.sfu.trackTimeoutMs} ms without media`,
        });
        continue;
      }
      const pc = this.peer();
      const track = new MediaStreamTrack({ kind: 'video' });
      const transceiver = pc.addTransceiver(track, { direction: 'sendonly' });
      const pull = new Pull(this, pub, track, transceiver);
      this.senders.add(transceiver.sender);
      transceiver.sender.onPictureLossIndication.subscribe(() => {
        pull.plisIn++;
        if (pull.status === 'active') this.sfu.requestKeyframe(pull.publication);
      });
      added.push({ pull, result: { sessionId: r.sessionId, trackName: r.trackName } });
      results.push(added.at(-1).result);
    }
    if (!added.length) return { requiresImmediateRenegotiation: false, tracks: results };
    const offer = await localDescription(this.pc, this.sfu.mediaAddress, 'offer');
    for (const { pull, result } of added) {
      pull.mid = pull.transceiver.mid;
      result.mid = pull.mid;
      this.pulls.set(pull.mid, pull);
      pull.publication.subscribers.add(pull);
      this.sfu.log(
        `session ${this.id} pulls ${pull.publication.trackName} of ${pull.publication.session.id} on mid ${pull.mid}`,
      );
    }
    return { requiresImmediateRenegotiation: true, tracks: results, sessionDescription: offer };
  }

  /** PUT renegotiate: the endpoint's answer to the SFU's offer. */
  async renegotiate(answer) {
    if (!this.pc || this.pc.signalingState !== 'have-local-offer')
      fail(
        'invalid_session_description',
        `session ${this.id} has no SFU offer waiting for an answer: renegotiate answers the offer of a tracks/new response with requiresImmediateRenegotiation`,
      );
    if (answer.type !== 'answer')
      fail(
        'invalid_session_description',
        'renegotiate takes the endpoint\'s answer: sessionDescription.type must be "answer"',
      );
    await setRemote(this.pc, answer);
    for (const pull of this.pulls.values()) {
      if (pull.ready || pull.status !== 'active') continue;
      pull.ready = true;
      if (this.connected) this.sfu.requestKeyframe(pull.publication);
    }
    return {};
  }

  // --- close --------------------------------------------------------------------------------
  /** PUT tracks/close: stops the named mids; with an offer (force false), answers it. */
  async close(mids, force, offer) {
    if (!force && (!this.pc || this.pc.signalingState !== 'stable'))
      fail(
        'invalid_session_description',
        `session ${this.id} ${this.pc ? 'has an SFU offer waiting for its answer: renegotiate first' : 'has no negotiated connection to close tracks on: use force: true'}`,
      );
    const tracks = mids.map((mid) => {
      const pull = this.pulls.get(mid);
      const pub = this.publicationByMid.get(mid);
      if (pull && !pull.closed) {
        this.sfu.unsubscribe(pull);
        pull.closed = true;
        // The transceiver stays as negotiated (werift would reject an inactive m-line, which
        // breaks BUNDLE when it is the first): it only stops carrying media and reports.
        pull.transceiver.sender.stop();
        this.senders.delete(pull.transceiver.sender);
        return { mid };
      }
      if (pub && !pub.closed) {
        this.sfu.collect(pub, 'closed');
        pub.closed = true;
        return { mid };
      }
      return {
        mid,
        errorCode: 'close_track_error',
        errorDescription: "Track doesn't exist or was already closed",
      };
    });
    const body = { requiresImmediateRenegotiation: false, tracks };
    if (!force) body.sessionDescription = await this.answer(offer);
    return body;
  }

  /** GET session: every track this session publishes or pulls, with its status. */
  state() {
    const tracks = [];
    for (const pub of this.publications.values())
      tracks.push({
        location: 'local',
        mid: pub.mid,
        trackName: pub.trackName,
        status: pub.status,
      });
    for (const pull of this.pulls.values())
      tracks.push({
        location: 'remote',
        mid: pull.mid,
        sessionId: pull.publication.session.id,
        trackName: pull.publication.trackName,
        status: pull.status,
      });
    return { tracks, dataChannels: [] };
  }

  stats() {
    return {
      sessionId: this.id,
      connectionState: this.pc?.connectionState ?? 'new',
      droppedPackets: this.droppedPackets,
      published: [...this.publications.values()].map((p) => ({
        trackName: p.trackName,
        mid: p.mid,
        status: p.status,
        packetsIn: p.packetsIn,
        bytesIn: p.bytesIn,
        keyframeRequests: p.keyframeRequests,
        subscribers: p.subscribers.size,
      })),
      pulled: [...this.pulls.values()].map((p) => ({
        mid: p.mid,
        sessionId: p.publication.session.id,
        trackName: p.publication.trackName,
        status: p.status,
        ready: p.ready,
        packetsOut: p.packetsOut,
        plisIn: p.plisIn,
      })),
    };
  }

  async destroy() {
    this.closed = true;
    for (const pub of this.publications.values()) this.sfu.collect(pub, 'session deleted');
    for (const pull of this.pulls.values()) this.sfu.unsubscribe(pull);
    const pc = this.pc;
    this.pc = null;
    if (pc) await pc.close().catch(() => {});
    // werift forgets a transceiver the endpoint stopped (and reuses its mid), and close() then
    // never stops its sender's RTCP loop, which would keep the process alive.
    for (const sender of this.senders) sender.stop();
  }
}

class Publication {
  constructor(session, mid, trackName) {
    this.session = session;
    this.mid = mid;
    this.trackName = trackName;
    this.status = 'active';
    this.closed = false;
    this.lastMediaAt = session.sfu.now(); // the collection window starts at the declaration
    this.subscribers = new Set();
    this.packetsIn = 0;
    this.bytesIn = 0;
    this.keyframeRequests = 0;
  }
}

class Pull {
  constructor(session, publication, track, transceiver) {
    this.session = session;
    this.publication = publication;
    this.track = track;
    this.transceiver = transceiver;
    this.mid = null;
    this.status = 'active';
    this.closed = false;
    this.ready = false; // once the endpoint's answer is applied
    this.packetsOut = 0;
    this.plisIn = 0;
  }
}

/** Applies a remote description; werift's refusal is the client's bad SDP, not a server fault. */
async function setRemote(pc, desc) {
  try {
    await pc.setRemoteDescription(desc);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    fail(
      'invalid_session_description',
      `the ${desc.type} was refused: ${e?.message ?? e}. Send the SDP your peer connection generated, unchanged`,
    );
  }
}
