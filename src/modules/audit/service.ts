import type { Kysely } from 'kysely';
import type { AuditEventsTable, Database } from '../../db/schema.js';
import { parseJson } from '../../lib/json.js';
import { chainVerifier, type ChainBreak } from './chain.js';
import { auditRepository, type AuditFilter } from './repository.js';
import type { Changes } from './writer.js';

/** An audit event as presented (CLI, exports, dashboard). */
export interface AuditEventView {
  id: string;
  object: 'audit_event';
  workspace_id: string;
  seq: number;
  occurred_at: string;
  action: string;
  actor: { type: string; id: string; name: string };
  target: { type: string; id: string };
  changes: Changes;
  request_id: string | null;
  idempotency_key: string | null;
  ip: string | null;
  user_agent: string | null;
  hash: string;
}

/** The result of verifying a workspace's chain. */
export type AuditVerification = { ok: true; events: number; head: string } | ({ ok: false; events: number } & ChainBreak);

function present(row: AuditEventsTable): AuditEventView {
  return {
    id: row.id,
    object: 'audit_event',
    workspace_id: row.workspace_id,
    seq: Number(row.seq),
    occurred_at: row.occurred_at,
    action: row.action,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    target: { type: row.target_type, id: row.target_id },
    changes: parseJson<Changes>(row.changes, {}),
    request_id: row.request_id,
    idempotency_key: row.idempotency_key,
    ip: row.ip,
    user_agent: row.user_agent,
    hash: row.hash,
  };
}

const BATCH = 1000;

/** Reading the audit log: newest events, full export in chain order, and chain verification. */
export function createAuditService(db: Kysely<Database>) {
  async function* inChainOrder(workspaceId: string): AsyncGenerator<AuditEventsTable> {
    let after = 0;
    for (;;) {
      const batch = await auditRepository.inOrder(db, workspaceId, after, BATCH);
      for (const row of batch) yield row;
      if (batch.length < BATCH) return;
      after = Number(batch[batch.length - 1]!.seq);
    }
  }

  return {
    /** The newest events of a workspace, newest first. */
    async list(workspaceId: string, limit = 100): Promise<AuditEventView[]> {
      return (await auditRepository.newest(db, workspaceId, limit)).map(present);
    },

    /** Events matching the filters, newest first, at most `limit`. */
    async search(workspaceId: string, filter: AuditFilter, limit = 50): Promise<AuditEventView[]> {
      return (await auditRepository.search(db, workspaceId, filter, limit)).map(present);
    },

    /** Every event of a workspace, oldest first, streamed in batches. */
    async *export(workspaceId: string): AsyncGenerator<AuditEventView> {
      for await (const row of inChainOrder(workspaceId)) yield present(row);
    },

    /** Recomputes the workspace's chain and reports the first break, if any. */
    async verify(workspaceId: string): Promise<AuditVerification> {
      const verifier = chainVerifier();
      for await (const row of inChainOrder(workspaceId)) {
        const broken = verifier.push(row);
        if (broken) return { ok: false, events: verifier.count, ...broken };
      }
      const head = (await auditRepository.head(db, workspaceId)) ?? { seq: 0, hash: '' };
      const broken = verifier.finish(head);
      if (broken) return { ok: false, events: verifier.count, ...broken };
      return { ok: true, events: verifier.count, head: head.hash };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
