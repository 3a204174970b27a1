// Types of web/glue/mailbox.js, `@tether-rt/tether/mailbox` (docs/mailbox.md).
import type { DrivenCore } from './driver.d.ts';

export interface MailboxLimits {
  readonly entropyBytes: number;
  readonly maxTextBytes: number;
  readonly maxRequestBytes: number;
  readonly maxTargetBytes: number;
  readonly maxMessageIdBytes: number;
  readonly maxNameBytes: number;
  readonly maxStoredMessages: number;
  readonly maxStoredBytes: number;
  readonly maxRecords: number;
  readonly retentionMs: number;
  readonly statusRetentionMs: number;
  readonly maxListCount: number;
  readonly maxListBytes: number;
  readonly maxAckBatch: number;
  readonly maxReaders: number;
  readonly maxPairs: number;
  readonly maxPendingPairs: number;
  readonly maxOpenCodes: number;
  readonly codeTtlMs: number;
  readonly pendingPairTtlMs: number;
  readonly floodBurst: number;
  readonly floodRefillMs: number;
}

export type MailboxErrorCode =
  | 'bad_request'
  | 'bad_key'
  | 'unpaired_sender'
  | 'bad_code'
  | 'not_found'
  | 'unknown_mailbox'
  | 'unknown_pair'
  | 'unknown_message'
  | 'method_not_allowed'
  | 'id_conflict'
  | 'mailbox_exists'
  | 'oversize'
  | 'upgrade_required'
  | 'flood'
  | 'too_many_pairs'
  | 'too_many_readers'
  | 'storage_failed'
  | 'busy'
  | 'mailbox_full'
  | 'internal';

export type MailboxRoute =
  | 'create'
  | 'info'
  | 'issue_code'
  | 'pair'
  | 'list_pairs'
  | 'accept_pair'
  | 'unpair'
  | 'send'
  | 'list'
  | 'ack'
  | 'status'
  | 'stream';

/** An answer the host sends as it is: status, JSON body, Retry-After when retryAfterMs >= 0. */
export interface MailboxErrorResponse {
  ok: false;
  status: number;
  error: MailboxErrorCode;
  body: string;
  retryAfterMs: number;
}

export type FrontDoor = { ok: true; route: MailboxRoute; mailbox: string } | MailboxErrorResponse;

export interface MailboxRequestInput {
  method: string;
  /** Path and query, as the client sent them. */
  target: string;
  authorization?: string;
  body?: Uint8Array;
  /** limits.entropyBytes of cryptographic randomness (api.entropy()). */
  entropy: Uint8Array;
}

export type MailboxAction =
  | { kind: 'persist'; token: number; puts: [string, string][]; deletes: string[] }
  | { kind: 'respond'; request: number; status: number; body: string; retryAfterMs: number }
  | { kind: 'accept'; request: number; reader: number }
  | { kind: 'push'; reader: number; text: string }
  | { kind: 'close'; reader: number; code: number; reason: string };

export type MailboxEvent = {
  kind: 'record_skipped' | 'storage_failed';
  key: string;
  detail: string;
};

export interface MailboxCoreInfo {
  exists: boolean;
  id: string;
  failed: boolean;
  storedMessages: number;
  storedBytes: number;
  records: number;
  readers: number;
}

export interface MailboxCore extends DrivenCore<MailboxAction, MailboxEvent> {
  loadRecord(key: string, value: string): boolean;
  loaded(nowMs: number): void;
  handleRequest(requestId: number, input: MailboxRequestInput, nowMs: number): void;
  handlePersisted(token: number, ok: boolean, nowMs: number): void;
  handleReaderClosed(reader: number, nowMs: number): void;
  restoreReader(nowMs: number): number | null;
  handleTimeout(nowMs: number): void;
  pollAction(): MailboxAction | null;
  pollEvent(): MailboxEvent | null;
  pollTimeout(): number | null;
  info(): MailboxCoreInfo;
  snapshot(): Record<string, string>;
  dispose(): void;
}

export interface MailboxApi {
  readonly limits: MailboxLimits;
  readonly errors: Readonly<Record<MailboxErrorCode, { status: number; fix: string }>>;
  frontDoor(
    method: string,
    target: string,
    contentLength: number,
    websocketUpgrade: boolean,
  ): FrontDoor;
  errorResponse(
    code: MailboxErrorCode,
    message: string,
    retryAfterMs?: number,
  ): MailboxErrorResponse;
  mailboxIdFor(entropy: Uint8Array): string;
  entropy(): Uint8Array;
  createCore(): MailboxCore;
}

export function loadMailbox(options?: {
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
}): Promise<MailboxApi>;
export function createMailboxApi(mod: object): MailboxApi;
