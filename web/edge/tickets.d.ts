// Types of `tether/tickets` (web/edge/tickets.js): signed connection tickets for the room endpoints.
import type { LoadOptions } from '../glue/load.js';

export declare const TICKET_VERSION: 't1';
export declare const MAX_TICKET_CHARS: number;
export declare const MIN_SECRET_CHARS: number;
export declare const MAX_TICKET_TTL_SECONDS: number;
export declare const KINDS: readonly ['human', 'agent'];
export type TicketClaims = {
  readonly writer: string;
  readonly kind?: 'human' | 'agent';
  readonly room: string;
  /** Lifetime in seconds (default 300, at most MAX_TICKET_TTL_SECONDS). */
  readonly ttlSeconds?: number;
  readonly nowMs?: number;
};
/**
 * Loads the ticket codec where it cannot load itself (workerd: pass the precompiled
 * `wasmModule`); Node and Deno load it on import, and a browser uses the module already loaded.
 */
export declare function initTickets(options?: LoadOptions): Promise<void>;
export declare function mintTicket(secret: string, claims: TicketClaims): Promise<string>;
export type TicketCheck =
  | {
      readonly ok: true;
      readonly writer: string;
      readonly kind: 'human' | 'agent';
      readonly room: string;
      readonly exp: number;
    }
  | {
      readonly ok: false;
      readonly reason: 'missing' | 'malformed' | 'signature' | 'expired' | 'room';
      readonly message: string;
    };
export declare function verifyTicket(
  secret: string,
  ticket: string,
  options?: { readonly room?: string; readonly nowMs?: number },
): Promise<TicketCheck>;
