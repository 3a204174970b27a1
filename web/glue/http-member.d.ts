// Types of web/glue/http-member.js: the HTTP relay transport's relay side and peer link.

/** The protocol's bounds (src/room/http_member.hpp). */
export interface HttpLimits {
  maxBodyBytes: number;
  maxQueryBytes: number;
  pollWaitMs: number;
  idleMs: number;
  maxMembersPerRoom: number;
  maxMembers: number;
  maxQueueBytes: number;
  maxQueueFrames: number;
  maxPollBytes: number;
  sessionBytes: number;
  maxRetries: number;
  retryMs: number;
  maxLinkQueueBytes: number;
}
export declare function httpLimits(): HttpLimits;
/** Headers every answer of the HTTP form carries, so a page of any origin can read it. */
export declare const HTTP_CORS: Readonly<Record<string, string>>;
export declare function httpRefusal(code: string): { status: number; body: string } | null;
export declare function readBoundedText(request: Request, max: number): Promise<string | null>;

export interface HttpMembersHost {
  attach(session: string, room: string, identity: any): void;
  deliver(session: string, text: string): void;
  detach(session: string, code: number, reason: string): void;
}
export interface HttpMembers {
  /** exp: the ticket's expiry in Unix seconds; the session ends with it. */
  open(identity: { writer: string; kind: string; room: string; exp?: number }): Promise<Response>;
  /** identity: the ticket the call carried, when the host verified one. */
  request(
    request: Request,
    room: string,
    op: string,
    identity?: { writer: string; exp?: number } | null,
  ): Promise<Response>;
  outbound(session: string, text: string): void;
  relayClose(session: string, code?: number, reason?: string): void;
  queuedBytes(session: string): number;
  members(): number;
  membersIn(room: string): number;
  readonly limits: HttpLimits;
}
export declare function createHttpMembers(host: HttpMembersHost): HttpMembers;

/** A WebSocket-shaped HTTP link (what web/peer/relay-transport.js runs over with transport 'http'). */
export interface HttpSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  addEventListener(name: 'open' | 'message' | 'close' | 'error', f: (ev: any) => void): void;
  send(text: string): void;
  close(): void;
}
export declare function createHttpSocket(
  url: string,
  options?: { fetch?: typeof fetch },
): HttpSocket;
