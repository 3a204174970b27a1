// Types of web/glue/cockpit-transport.js: transport helpers the cockpit's clients share.
export interface RelayInfo {
  version: number;
  wtUrl?: string;
  certHash?: string;
  wsUrl: string;
}
/** The relay's certificate hash (hex) as WebTransport's serverCertificateHashes takes it. */
export function pinnedHashes(hex: string): { algorithm: 'sha-256'; value: BufferSource }[];
export function relayInfo(httpUrl?: string): Promise<RelayInfo>;
export function openWebTransport(info: RelayInfo, path: string): Promise<WebTransport>;
export function readStream(
  readable: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array) => void,
): Promise<void>;
export function oneShot(wt: WebTransport, bytes: Uint8Array): Promise<void>;
export function openWebSocket(
  info: RelayInfo,
  role: 'robot' | 'viewer',
  WebSocketImpl?: new (url: string) => WebSocket,
): Promise<WebSocket>;
export function runLink(
  driver: { input<R>(fn: (now: number) => R): R },
  core: {
    handleConnected(lane: 'webtransport' | 'websocket', now: number): void;
    handleDisconnected(detail: string, now: number): void;
  },
  holder: { link: unknown },
  open: () => Promise<{ lane: 'webtransport' | 'websocket'; closed: Promise<string> }>,
): Promise<void>;
