import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

/** Who performs an operation. Services receive it explicitly and never look at the HTTP request. */
export interface Actor {
  type: 'api_key' | 'user' | 'system' | 'visitor';
  id: string;
  name: string;
  workspaceId: string;
}

/** Facts about the request behind an operation, recorded with writes (audit) when there is one. */
export interface RequestContext {
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
  /** The Idempotency-Key the write was made under, if any. */
  idempotencyKey?: string | null;
}

/** What every service call receives: the actor and, when it came over HTTP, the request facts. */
export interface OperationContext {
  actor: Actor;
  request: RequestContext;
  /**
   * An open transaction the operation must join instead of opening its own: set by the idempotency
   * layer so the write, its audit event and the stored response commit together.
   */
  trx?: Transaction<Database>;
}

/** An operation context for work started outside HTTP (the CLI, the demo seeder). */
export function systemContext(workspaceId: string, name = 'cli'): OperationContext {
  return {
    actor: { type: 'system', id: name, name, workspaceId },
    request: { requestId: null, ip: null, userAgent: null },
  };
}
