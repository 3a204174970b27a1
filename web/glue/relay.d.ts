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
/**
 * The reference's validateEnvelope, run by the core: null when well-formed, else the reason
 * (the `malformed` details, plus `bounds` for an id or path over the core's limits).
 */
export declare function validateEnvelope(env: unknown): string | null;
/** The reference's checkEnvelope, decided by the core: null when clean, else the violation. */
export declare function checkEnvelope(
  policy: OpPolicy | undefined,
  env: OpEnvelope,
  ctx: PrincipalCtx,
  room: string,
  info?: PolicyRoomInfo,
): PolicyViolation | null;
/** One origin's admitted versions as disjoint inclusive ranges (the reference's Ranges). */
export type Ranges = {
  has(version: number): boolean;
  /** Records an admitted version; false when it was already there. */
  add(version: number): boolean;
  /** The end of the last range (the highest admitted version), 0 when none. */
  max(): number;
  /** The end of the first range: the origin's first contiguous run of admitted versions, or 0. */
  prefix(): number;
  toJSON(): readonly (readonly [from: number, to: number])[];
};
export declare function createRanges(initial?: readonly (readonly [number, number])[]): Ranges;
/** A room's admission evidence as it is held while the room runs. */
export type AdmissionEvidence = {
  readonly ranges: Map<string, Ranges>;
  readonly settled: Map<string, Hlc>;
};
/** One admitted envelope joins the evidence (its ranges must come from createRanges). */
export declare function recordAdmission(
  evidence: AdmissionEvidence,
  env: { readonly origin: string; readonly version: number; readonly hlc: Hlc },
): void;
/**
 * One room's register retention (the reference's RegisterStore), run by the core's store. Bad
 * input (an envelope validateEnvelope refuses, a checkpoint or settled record of the wrong
 * shape) throws a TypeError naming what was expected, and changes nothing.
 */
export type RegisterStore = {
  /** Folds one well-formed envelope's ops into the per-path registers (retention only). */
  ingest(env: OpEnvelope): void;
  /** The register state as a welcome snapshot or a checkpoint carries it. */
  checkpoint(): RegisterCheckpoint[];
  /** Merges checkpointed register state in (idempotent). */
  load(registers: readonly RegisterCheckpoint[]): void;
  /** Collects covered siblings and water marks at or below each named origin's settled stamp. */
  settle(settled: Readonly<Record<string, Hlc>>): void;
  /** Drops all register state. */
  reset(): void;
  /** The highest epoch ever retained at `path` (0 when none). */
  maxEpoch(path: readonly Key[]): number;
  /** Whether the origin's retained sibling or water mark at `path` is at or above the dot. */
  covers(path: readonly Key[], dot: Dot): boolean;
};
export declare function createRegisterStore(): RegisterStore;
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
  /**
   * The adapter replaying its own journal into a fresh relay (tether extension): its hello and
   * envelopes are not judged again (no proto or policyVersion pin, op limit, rate or policy
   * question; docs/rooms.md § Durability at the edge). Never set it from anything a client sends.
   */
  readonly replay?: boolean;
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
  /**
   * tether's: the policy's own `canWrite` kept under this key too promises that it allows every
   * path below the room root (its verdict on any op with a non-empty path is true). tether's
   * relay then asks it about root ops only; the reference ignores the key and asks about every op,
   * with the same verdicts. Any other value here is ignored.
   */
  readonly [canWriteRootOnly]?: OpPolicy['canWrite'];
};
/** `Symbol.for('tether.relay.canWriteRootOnly')`: see `OpPolicy`. */
export declare const canWriteRootOnly: unique symbol;
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
/**
 * `send`'s second argument is true for a presence update (ephemeral: a slow reader may lose it).
 * `read(bytes)` is called with a reader's acknowledgement when the relay was created with
 * `readAckBytes` (tether's extension, docs/rooms.md § The slow-reader rule).
 */
export type RelaySocket = {
  send(msg: ServerMsg, ephemeral?: boolean): void;
  close?(): void;
  read?(bytes: number): void;
};
/**
 * A socket whose connection is judged by the relay's admission (`judgedBy`) also hears:
 * `send(text, ephemeral, true)` for a frame the admission core passed, `refused(code, reason)`
 * for one it refused, or for a frame it refused on receipt (close the socket with that code), and `credited()` for a reader's acknowledgement it credited.
 */
export type RelayTextSocket = {
  send(text: string, ephemeral?: boolean, passed?: boolean): void;
  close?(): void;
  read?(bytes: number): void;
  refused?(code: number, reason: string): void;
  credited?(): void;
};
/**
 * What `onCommit` is handed: the envelope as an object (the reference's), or with `commitText`
 * (tether's extension) as the core's JSON text, for a store that keeps it as text (a parse and a
 * stringify less per envelope; its seq is `state.seq`).
 */
export type RelayCommitOptions =
  | {
      readonly commitText?: false;
      readonly onCommit?: (
        room: string,
        env: SeqEnvelope,
        state: RoomState,
      ) => void | Promise<void>;
    }
  | {
      readonly commitText: true;
      readonly onCommit?: (room: string, env: string, state: RoomState) => void | Promise<void>;
    };
export type RelayOptions = RelayCommitOptions & {
  readonly policy?: OpPolicy;
  readonly ejection?: 'writer' | 'connection';
  readonly policyVersion?: number;
  readonly limits?: {
    readonly maxOpsPerEnvelope?: number;
    readonly maxEnvelopesPerSecond?: number;
  };
  readonly journalLimit?: number;
  /**
   * tether's extension, off (0) by default so the wire stays the reference's: every welcome
   * advertises `readAck` with this interval, and a client's `{t: 'read', room, bytes}` reaches
   * the socket's `read` (docs/rooms.md § The slow-reader rule). The edge sets it.
   */
  readonly readAckBytes?: number;
  /**
   * tether's extension: the host's admission core (web/edge/limits.js `boundary`), which then
   * judges the frames and sends of connections bound with `judgedBy` inside the relay's own
   * calls (bindings/room_bindings.cpp). It must outlive the relay.
   */
  readonly admission?: unknown;
  readonly now?: () => number;
  readonly onViolation?: (room: string, violation: PolicyViolation) => void;
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
  /** tether's: the connection's frames and sends judged by `opt.admission` as its connection `id`. */
  judgedBy?(id: number): boolean;
  /** After judgedBy: a text frame checked and received in one call. */
  receiveFrame?(text: string): ReceiveError | null;
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
  /** tether's: while true the admission judges nothing (the host drops every frame unsent). */
  pauseJudging?(paused: boolean): void;
  stats(): { rooms: number; registers: number; registerBytes: number };
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
  /**
   * The data shape this client writes. The hello carries it; an envelope carries it only when it
   * is a migration (migrate()) or the first write into a room nobody has written, so an
   * ordinary write never cuts the room's generation.
   */
  readonly schemaVersion?: number;
  /**
   * A persisted outbox: what tail() returned before the process went away. Resent after the
   * first welcome (or dropped as 'generation' when the room was cut meanwhile); throws, naming
   * the fix, when an entry is not this client's.
   */
  readonly outbox?: readonly string[];
  readonly now?: () => number;
};
/** A write the relay refused ('generation', 'schema', 'order'): not in the room. */
export type RefusedWrite = { readonly reason: string; readonly env: OpEnvelope };
/**
 * What the relay refused, in the order it happened: a write (as refused() lists it), our hello
 * (`rejected`: 'proto', 'policy-version', 'schema' or 'unauthorized', with what the relay
 * expected), or us (`ejected`: an eject naming our writer; the relay closes the socket). After a
 * rejection or an ejection the client is not welcomed (write() returns null) until a hello is
 * welcomed again.
 */
export type RoomClientEvent =
  | ({ readonly kind: 'refused' } & RefusedWrite)
  | { readonly kind: 'rejected'; readonly reason: string; readonly expected?: number }
  | { readonly kind: 'ejected'; readonly reason: string }
  /**
   * The relay came back with the room in a new generation no migration cut ('room-lost': it
   * restarted without storage). The client hydrates from what the room holds now; `value` is the
   * document it held before, to write again (a root set) if it should be kept.
   */
  | { readonly kind: 'lost'; readonly reason: 'room-lost'; readonly value: unknown };
export type RoomClient = {
  /** The hello to send on every (re)connect, once per socket: it starts the socket's read count. */
  hello(): string;
  /**
   * The client message for these ops, or null when not welcomed (before the first welcome, and
   * after a rejection or an ejection until the next welcome) or while our migration is in
   * flight. Throws, naming the fix, for malformed ops and where the room's schema is not this
   * client's (older: migrate() first; newer: this client is out of date).
   */
  write(ops: readonly StoreOp[]): string | null;
  /**
   * The client message that moves a room written at an older schema to this client's: the ops
   * (a set at the root path [] among them, the whole document in the new shape) cut a new
   * generation holding exactly them. Until the welcome into it, write() and migrate() return
   * null. Throws, naming the fix, when the room is not older or the root is not set.
   */
  migrate(ops: readonly StoreOp[]): string | null;
  /**
   * One server message; returns the client messages to send in answer (a read acknowledgement
   * among them when the relay asked for them). Pass the frame's text: a parsed object is not
   * counted as read, and stops acknowledgements on this socket.
   */
  receive(message: string | ServerMsg): string[];
  /** The unacknowledged tail as client messages, oldest first. */
  tail(): string[];
  /** The registers folded last-writer-wins. */
  value(): unknown;
  readonly unacked: number;
  readonly seq: number;
  readonly welcomed: boolean;
  /** The schema the room holds, from the last welcome (-1 before the first). */
  readonly roomSchemaVersion: number;
  refused(): RefusedWrite[];
  /** Every refusal so far, refused writes included, oldest first. */
  events(): RoomClientEvent[];
};
export declare function createRoomClient(options: RoomClientOptions): RoomClient;
