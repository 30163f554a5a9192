import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { OperationContext } from '../../lib/actor.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { eventHash } from './chain.js';
import { auditRepository } from './repository.js';

/** Before and after of each changed field. */
export type Changes = Record<string, { before: unknown; after: unknown }>;

/** One audit entry as a service describes it. */
export interface AuditEntry {
  /** `resource.verb`, e.g. `lead.updated`. */
  action: string;
  target: { type: string; id: string };
  changes: Changes;
}

/** The fields of `after` that differ from `before` (compared as canonical JSON), as before/after pairs. */
export function diffChanges<T extends object>(before: T | null, after: T, fields: readonly (keyof T & string)[]): Changes {
  const changes: Changes = {};
  for (const field of fields) {
    const old = before === null ? null : (before[field] ?? null);
    const now = after[field] ?? null;
    // A creation (no before) changes exactly the fields that are set: no JSON needed to tell.
    const changed = before === null ? now !== null : canonicalJson(old) !== canonicalJson(now);
    if (changed) changes[field] = { before: old, after: now };
  }
  return changes;
}

/**
 * The one audit writer. Appends an event to the workspace's hash chain inside the caller's transaction,
 * so the write and its event commit together or not at all.
 */
export function createAuditWriter(clock: Clock) {
  return {
    async record(trx: Transaction<Database>, ctx: OperationContext, entry: AuditEntry): Promise<void> {
      const workspaceId = ctx.actor.workspaceId;
      const next = await auditRepository.advanceHead(trx, workspaceId);
      if (!next) throw new Error(`audit: workspace ${workspaceId} does not exist`);
      const now = clock.now();
      const event = {
        id: newId('auditEvent', now.getTime()),
        workspace_id: workspaceId,
        seq: next.seq,
        occurred_at: now.toISOString(),
        action: entry.action,
        actor_type: ctx.actor.type,
        actor_id: ctx.actor.id,
        actor_name: ctx.actor.name,
        target_type: entry.target.type,
        target_id: entry.target.id,
        changes: canonicalJson(entry.changes),
        request_id: ctx.request.requestId,
        idempotency_key: ctx.request.idempotencyKey ?? null,
        ip: ctx.request.ip,
        user_agent: ctx.request.userAgent,
        prev_hash: next.head,
      };
      const hash = eventHash(event);
      await auditRepository.insert(trx, { ...event, hash });
      await auditRepository.setHead(trx, workspaceId, hash);
    },
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;
