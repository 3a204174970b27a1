// `tether/peer`: peers over real RTCDataChannels (agent-bus-and-swarm.md § WebRTC layers, § Swarm
// transfer). Browser-safe: the disk folder for Node agents is `tether/peer/node`.
export { createWebRtcTransport, loopbackOnly } from './webrtc-transport.js';
export { initPeer } from '../glue/room-member.js';
export { bytesSource, createSwarmPeer, sha256HexAsync } from './swarm-glue.js';
export { opfsFolder } from './storage-opfs.js';
export { createProgressView } from './progress-view.js';
