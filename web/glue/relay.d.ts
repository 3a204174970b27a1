// Types of `tether/relay`: the same surface as @mmstack/mesh-protocol's createRelay (its message
// shapes are the wire format), plus the JSON-text fast path and initRelay for workerd.
export type Key = string | number;
export type Hlc = { readonly p: number; readonly l: number };
export type Dot = { readonly origin: string; readonly hlc: Hlc };
export type StoreOp =
  | { kind: 'set'; path: readonly Key[]; next: unknown; prev?: unknown }
  | { kind: 'delete'; path: readonly Key[]; prev: unknown }
  | { kind: 'clear'; path: readonly Key[] };
export type SyncOp = StoreOp & { readonly cites: readonly Dot[]; readonly epoch: number };
/** The op protocol version of the core (3), once the module is loaded. */
export declare let MESH_PROTO_VERSION: number;
/** The core's room limits (src/room/limits.hpp), once the module is loaded. */
export declare let ROOM_LIMITS: Readonly<{
  meshProtoVersion: number;
  defaultJournalLimit: number;
  defaultMaxOpsPerEnvelope: number;
  maxIdBytes: number;
  maxRoomNameBytes: number;
  maxPathDepth: number;
  maxMessageBytes: number;
  maxBacklogMessages: number;
  maxBacklogBytes: number;
}>;
/** A hello as the room relay expects it (built by the core). */
export declare function helloText(o: {
  room: string;
  origin: string;
  policyVersion?: number;
  schemaVersion?: number;
  seq?: number;
}): string;
/** A journal envelope ({...env, seq}, as JSON text) as the client message that wrote it. */
export declare function replayText(room: string, seqEnvText: string): string;
export type OpEnvelope = {
  readonly proto: number;
  readonly instance: string;
  readonly origin: string;
  readonly writer: string;
  readonly version: number;
  readonly hlc: Hlc;
  readonly policyVersion: number;
  readonly ops: readonly SyncOp[];
  readonly schemaVersion?: number;
};
export type SeqEnvelope = OpEnvelope & { readonly seq: number };
export type SyncSibling = {
  readonly kind: 'set' | 'delete' | 'clear';
  readonly value?: unknown;
  readonly prev?: unknown;
  readonly writer: string;
  readonly origin: string;
  readonly hlc: Hlc;
  readonly epoch: number;
};
export type RegisterCheckpoint = {
  readonly path: readonly Key[];
  readonly siblings: readonly SyncSibling[];
  readonly water: Readonly<Record<string, Hlc>>;
  readonly epoch?: number;
};
export type PresenceState = {
  readonly origin: string;
  readonly writer: string;
  readonly data: unknown;
};
export type HelloMsg = {
  readonly t: 'hello';
  readonly room: string;
  readonly origin: string;
  readonly proto: number;
  readonly policyVersion: number;
  readonly seq?: number;
  readonly schemaVersion?: number;
};
export type ClientMsg =
  | HelloMsg
  | { readonly t: 'env'; readonly room: string; readonly env: OpEnvelope }
  | { readonly t: 'presence'; readonly room: string; readonly data: unknown }
  | { readonly t: 'signal'; readonly room: string; readonly to: string; readonly data: unknown };
export type WelcomeBody =
  | { readonly mode: 'up-to-date' }
  | { readonly mode: 'delta'; readonly envs: readonly SeqEnvelope[] }
  | {
      readonly mode: 'snapshot';
      readonly registers: readonly RegisterCheckpoint[];
      readonly wm: Readonly<Record<string, number>>;
    };
export type DropReason = 'duplicate' | 'generation' | 'schema' | 'order';
export type ServerMsg =
  | ({
      readonly t: 'welcome';
      readonly room: string;
      readonly seq: number;
      readonly instance: string;
      readonly schemaVersion: number;
      readonly peers: readonly PresenceState[];
      readonly members: readonly string[];
    } & WelcomeBody)
  | { readonly t: 'env'; readonly room: string; readonly env: SeqEnvelope }
  | {
      readonly t: 'presence';
      readonly room: string;
      readonly peer: PresenceState;
      readonly gone?: boolean;
    }
  | {
      readonly t: 'reject';
      readonly room: string;
      readonly reason: 'proto' | 'policy-version' | 'unauthorized' | 'schema';
      readonly expected?: number;
    }
  | { readonly t: 'eject'; readonly room: string; readonly writer: string; readonly reason: string }
  | {
      readonly t: 'member';
      readonly room: string;
      readonly origin: string;
      readonly gone?: boolean;
    }
  | { readonly t: 'signal'; readonly room: string; readonly from: string; readonly data: unknown }
  | {
      readonly t: 'settled';
      readonly room: string;
      readonly settled: Readonly<Record<string, Hlc>>;
    }
  | {
      readonly t: 'drop';
      readonly room: string;
      readonly origin: string;
      readonly version: number;
      readonly reason: DropReason;
    };
export type PrincipalCtx = {
  readonly writer: string;
  /** Binds the connection to this one room (tether extension): other rooms answer 'other-room'. */
  readonly room?: string;
  readonly kind?: 'human' | 'agent' | (string & {});
  readonly claims?: Readonly<Record<string, unknown>>;
};
export type PolicyRoomInfo = { readonly seq: number };
export type OpPolicy = {
  canWrite?(ctx: PrincipalCtx, path: readonly Key[], room: string, info?: PolicyRoomInfo): boolean;
  validate?(op: StoreOp, ctx: PrincipalCtx, room: string, info?: PolicyRoomInfo): boolean;
  canBump?(
    ctx: PrincipalCtx,
    path: readonly Key[],
    epoch: number,
    room: string,
    info?: PolicyRoomInfo,
  ): boolean;
  readonly verifyCitations?: boolean;
};
export type PolicyViolation = {
  readonly writer: string;
  readonly reason:
    | 'can-write'
    | 'validate'
    | 'malformed'
    | 'writer-mismatch'
    | 'proto'
    | 'ops-limit'
    | 'rate'
    | 'epoch-bump'
    | 'unknown-citation';
  readonly detail?: string;
  readonly path?: readonly Key[];
};
export type PathAclRule = {
  readonly prefix: readonly (Key | '*')[];
  readonly allow: (ctx: PrincipalCtx, room: string) => boolean;
};
export declare function pathPrefixAcl(rules: readonly PathAclRule[]): OpPolicy;
export type VersionRange = readonly [from: number, to: number];
export type RoomState = {
  readonly seq: number;
  readonly instance: string;
  checkpoint(): readonly RegisterCheckpoint[];
  readonly wm: Readonly<Record<string, number>>;
  readonly ranges: Readonly<Record<string, readonly VersionRange[]>>;
  readonly settled: Readonly<Record<string, Hlc>>;
  readonly schemaVersion: number;
};
export type RoomSnapshot = {
  readonly seq: number;
  readonly registers?: readonly RegisterCheckpoint[];
  readonly wm?: Readonly<Record<string, number>>;
  readonly instance?: string;
  readonly schemaVersion?: number;
  readonly journal?: readonly SeqEnvelope[];
  readonly ranges?: Readonly<Record<string, readonly VersionRange[]>>;
  readonly settled?: Readonly<Record<string, Hlc>>;
};
export type RelaySocket = { send(msg: ServerMsg): void; close?(): void };
export type RelayTextSocket = { send(text: string): void; close?(): void };
export type RelayOptions = {
  readonly policy?: OpPolicy;
  readonly ejection?: 'writer' | 'connection';
  readonly policyVersion?: number;
  readonly limits?: {
    readonly maxOpsPerEnvelope?: number;
    readonly maxEnvelopesPerSecond?: number;
  };
  readonly journalLimit?: number;
  readonly now?: () => number;
  readonly onViolation?: (room: string, violation: PolicyViolation) => void;
  readonly onCommit?: (room: string, env: SeqEnvelope, state: RoomState) => void | Promise<void>;
  readonly onDurabilityFailed?: (room: string, env: SeqEnvelope, cause: unknown) => void;
  readonly onDrop?: (room: string, env: OpEnvelope, reason: DropReason) => void;
  readonly onReject?: (
    room: string,
    ctx: PrincipalCtx,
    reason: 'proto' | 'policy-version' | 'unauthorized' | 'schema',
    expected?: number,
  ) => void;
  readonly onJoin?: (room: string, ctx: PrincipalCtx, origin: string) => void;
};
/** A message the core could not read: nothing changed. `message` says what to fix. */
export type ReceiveError = { readonly reason: string; readonly message: string };
export type RelayConnection = { receive(msg: ClientMsg): ReceiveError | null; disconnect(): void };
export type RelayTextConnection = {
  receive(text: string): ReceiveError | null;
  disconnect(): void;
};
export type RoomInfo = {
  readonly seq: number;
  readonly instance: string;
  readonly members: number;
  readonly journal: number;
  readonly stalled: boolean;
};
export type Relay = {
  connect(socket: RelaySocket, ctx: PrincipalCtx): RelayConnection;
  /** JSON text in, JSON text out: no JS objects built per message. */
  connectText(socket: RelayTextSocket, ctx: PrincipalCtx): RelayTextConnection;
  room(name: string): RoomInfo | undefined;
  hydrate(name: string, snapshot: RoomSnapshot): boolean;
  unload(name: string, options?: { readonly discard?: boolean }): boolean;
  stats(): { registers: number; registerBytes: number };
};
export declare function createRelay(opt?: RelayOptions): Relay;
export declare function initRelay(options?: {
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
}): Promise<void>;

export type RoomClientOptions = {
  readonly room: string;
  readonly origin: string;
  readonly writer: string;
  readonly policyVersion?: number;
  readonly schemaVersion?: number;
  readonly now?: () => number;
};
/** A write the relay refused ('generation', 'schema', 'order'): not in the room. */
export type RefusedWrite = { readonly reason: string; readonly env: OpEnvelope };
export type RoomClient = {
  /** The hello to send on every (re)connect. */
  hello(): string;
  /** The client message for these ops, or null before the first welcome. */
  write(ops: readonly StoreOp[]): string | null;
  /** One server message (text or object); returns the client messages to send in answer. */
  receive(message: string | ServerMsg): string[];
  /** The unacknowledged tail as client messages, oldest first. */
  tail(): string[];
  /** The registers folded last-writer-wins. */
  value(): unknown;
  readonly unacked: number;
  readonly seq: number;
  readonly welcomed: boolean;
  refused(): RefusedWrite[];
};
export declare function createRoomClient(options: RoomClientOptions): RoomClient;
