// How the local SFU and the robot camera set up their werift peer connections, so both ends of a
// loopback media path are configured alike (docs/webrtc-video.md § Media). Every choice here answers
// a pitfall met on these machines: H.264 Constrained Baseline 42e01f with packetization-mode 1
// (Chromium's WebRTC decodes it everywhere; no High profile), no header extensions (their ids are
// per connection, and forwarded packets would carry the publisher's), no public STUN server (the
// werift default), and host candidates on one address only.
import { RTCPeerConnection, useH264 } from 'werift';

/** The one video codec the SFU forwards: H.264 Constrained Baseline, packetization-mode 1. */
export const H264_PROFILE =
  'profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1';

/**
 * A werift peer connection. With an `address`, its ICE host candidates are that address alone:
 * werift leaves loopback out of its interface list (so it is added back) and advertises every
 * other interface too, but the sockets are bound to `address`, so candidates on other addresses
 * could never be reached and `keepCandidatesOn` drops them from every description handed out.
 * With `address: null` it gathers on every interface (and through `iceServers`), as a robot on a
 * real network talking to Cloudflare must.
 */
export function createPeer({ address, iceServers = [] }) {
  return new RTCPeerConnection({
    codecs: { video: [useH264({ parameters: H264_PROFILE })], audio: [] },
    headerExtensions: { video: [], audio: [] },
    iceServers,
    iceUseIpv6: false,
    ...(address
      ? { iceInterfaceAddresses: { udp4: address }, iceAdditionalHostAddresses: [address] }
      : {}),
    bundlePolicy: 'max-bundle',
  });
}

/** `sdp` with only the ICE candidates on `address` (all of them when address is null). */
export function keepCandidatesOn(sdp, address) {
  if (!address) return sdp;
  return sdp
    .split('\r\n')
    .filter((line) => !line.startsWith('a=candidate:') || line.split(' ')[4] === address)
    .join('\r\n');
}

/**
 * The local description after werift has gathered (it resolves with candidates in the SDP). An
 * answer's BUNDLE group is cut down to the offered one: werift keeps a section the offerer has
 * just stopped (port 0, out of its group) in the answer's group, which Chromium refuses.
 */
export async function localDescription(pc, address, kind) {
  const desc = kind === 'offer' ? await pc.createOffer() : await pc.createAnswer();
  await pc.setLocalDescription(desc);
  let sdp = keepCandidatesOn(pc.localDescription.sdp, address);
  if (kind === 'answer') sdp = bundleWithin(sdp, pc.remoteDescription.sdp);
  return { type: kind, sdp };
}

/** `answer` with its BUNDLE group holding only mids of the offer's BUNDLE group. */
export function bundleWithin(answer, offer) {
  const group = (sdp) =>
    /^a=group:BUNDLE(.*)$/m.exec(sdp)?.[1].trim().split(/\s+/).filter(Boolean) ?? null;
  const offered = group(offer);
  if (!offered) return answer;
  const kept = (group(answer) ?? []).filter((mid) => offered.includes(mid));
  return answer.replace(/^a=group:BUNDLE.*$/m, `a=group:BUNDLE ${kept.join(' ')}`);
}

/** The mids of an SDP's media sections, in order. */
export function sdpMids(sdp) {
  const mids = [];
  for (const line of sdp.split(/\r?\n/))
    if (line.startsWith('a=mid:')) mids.push(line.slice(6).trim());
  return mids;
}

/**
 * The first attribute a WebRTC description cannot do without (ICE credentials, the DTLS
 * fingerprint, a media section with a mid) that `sdp` lacks, or null. werift accepts
 * descriptions without them and fails later, out of sight.
 */
export function missingWebRtcLines(sdp) {
  for (const [what, re] of REQUIRED_LINES) if (!re.test(sdp)) return what;
  return null;
}

/** @type {[string, RegExp][]} */
const REQUIRED_LINES = [
  ['m=', /^m=/m],
  ['a=mid', /^a=mid:/m],
  ['a=ice-ufrag', /^a=ice-ufrag:/m],
  ['a=ice-pwd', /^a=ice-pwd:/m],
  ['a=fingerprint', /^a=fingerprint:/m],
];

/** The lines of media section `mid`, trimmed ([] when no section has that mid). */
function section(sdp, mid) {
  const sections = sdp.split(/\r?\n(?=m=)/).map((sec) => sec.split(/\r?\n/).map((l) => l.trim()));
  return sections.find((ls) => ls.includes(`a=mid:${mid}`)) ?? [];
}

/** The direction of the media section `mid` (sendrecv when the section names none). */
export function sdpDirection(sdp, mid) {
  const lines = section(sdp, mid);
  return (
    ['sendrecv', 'sendonly', 'recvonly', 'inactive'].find((d) => lines.includes(`a=${d}`)) ??
    'sendrecv'
  );
}

/**
 * Why the SFU cannot take video from section `mid` of an offer, or null: it must be a live video
 * section (a port other than 0) offering H.264 with packetization-mode 1, the one codec forwarded.
 */
export function videoSectionProblem(sdp, mid) {
  const lines = section(sdp, mid);
  const m = /^m=(\S+) (\d+) /.exec(lines[0] ?? '');
  if (!m || m[1] !== 'video') return `mid ${mid} is not a video media section`;
  if (m[2] === '0') return `mid ${mid} is rejected (port 0) in the offer`;
  const h264 = lines.map((l) => /^a=rtpmap:(\d+) H264\/90000/i.exec(l)?.[1]).filter(Boolean);
  const mode1 = h264.some((pt) =>
    lines.some((l) => l.startsWith(`a=fmtp:${pt} `) && /packetization-mode=1/.test(l)),
  );
  if (!mode1)
    return `mid ${mid} offers no H.264 with packetization-mode=1, the codec the SFU forwards`;
  return null;
}
