import type { Kysely } from 'kysely';
import type { AuditEventsTable, Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { parseJson } from '../../lib/json.js';
import { chainVerifier, type ChainBreak } from './chain.js';
import { checkpointSignatureHolds, signCheckpoint, type AuditCheckpoint } from './checkpoint.js';
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

/** A chain that does not verify. */
export type BrokenChain = Extract<AuditVerification, { ok: false }>;

/** What a checkpoint check found: the chain holds the checkpoint's event, or the first thing that failed. */
export type CheckpointVerification =
  | { ok: true; events: number; head: string; checkpoint: AuditCheckpoint }
  | ({ ok: false; events: number; checkpoint: AuditCheckpoint; failed: 'signature' | 'workspace' | 'chain' | 'checkpoint' } & ChainBreak);

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

/** Reading the audit log: newest events, full export in chain order, chain verification and checkpoints. */
export function createAuditService(db: Kysely<Database>, clock: Clock) {
  async function* inChainOrder(workspaceId: string, after = 0): AsyncGenerator<AuditEventsTable> {
    for (;;) {
      const batch = await auditRepository.inOrder(db, workspaceId, after, BATCH);
      for (const row of batch) yield row;
      if (batch.length < BATCH) return;
      after = Number(batch[batch.length - 1]!.seq);
    }
  }

  async function verify(workspaceId: string): Promise<AuditVerification> {
    const verifier = chainVerifier();
    for await (const row of inChainOrder(workspaceId)) {
      const broken = verifier.push(row);
      if (broken) return { ok: false, events: verifier.count, ...broken };
    }
    const head = (await auditRepository.head(db, workspaceId)) ?? { seq: 0, hash: '' };
    // Writes that committed while the events were read moved the head on: their events are there too (each
    // is committed with its head), so read on to it rather than report a live service's chain as broken.
    if (head.seq > verifier.count) {
      for await (const row of inChainOrder(workspaceId, verifier.count)) {
        if (Number(row.seq) > head.seq) break;
        const broken = verifier.push(row);
        if (broken) return { ok: false, events: verifier.count, ...broken };
      }
    }
    const broken = verifier.finish(head);
    if (broken) return { ok: false, events: verifier.count, ...broken };
    return { ok: true, events: verifier.count, head: head.hash };
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
    verify,

    /**
     * Signs a checkpoint of the workspace's newest event with `signingKey`, once the chain up to it
     * verifies (a broken chain is reported instead: signing it would vouch for the damage).
     */
    async checkpoint(workspaceId: string, signingKey: string): Promise<{ ok: true; checkpoint: AuditCheckpoint } | BrokenChain> {
      const verification = await verify(workspaceId);
      if (!verification.ok) return verification;
      const head = { workspaceId, seq: verification.events, hash: verification.head };
      return { ok: true, checkpoint: signCheckpoint(head, clock.now(), signingKey) };
    },

    /**
     * Checks a checkpoint kept outside the database: its signature under `signingKey`, its workspace, the
     * chain itself, and that the chain still holds the checkpoint's event with the checkpoint's hash (which
     * the chain alone cannot tell once its newest events and the recorded head were both rolled back).
     */
    async verifyCheckpoint(workspaceId: string, checkpoint: AuditCheckpoint, signingKey: string): Promise<CheckpointVerification> {
      const { seq } = checkpoint;
      const fail = (failed: 'signature' | 'workspace' | 'checkpoint', reason: string, events = 0, eventId: string | null = null) =>
        ({ ok: false, events, checkpoint, failed, eventId, seq, reason }) as const;
      if (!checkpointSignatureHolds(checkpoint, signingKey)) {
        return fail('signature', 'the checkpoint signature does not verify: it was changed, or signed with another AUDIT_SIGNING_KEY');
      }
      if (checkpoint.workspace_id !== workspaceId) {
        return fail('workspace', `the checkpoint is of workspace ${checkpoint.workspace_id}, not ${workspaceId}`);
      }
      const chain = await verify(workspaceId);
      if (!chain.ok) return { ...chain, checkpoint, failed: 'chain' };
      const signed = `the checkpoint of ${checkpoint.created_at} signed event #${seq}`;
      if (chain.events < seq) {
        return fail('checkpoint', `${signed}, but the chain now ends at event #${chain.events}: events were removed from the end and the recorded head rolled back`, chain.events);
      }
      const event = seq === 0 ? { id: null, hash: '' } : await auditRepository.atSeq(db, workspaceId, seq);
      if (event?.hash !== checkpoint.hash) {
        return fail('checkpoint', `${signed} with hash ${checkpoint.hash.slice(0, 16)}…, but that event now has hash ${event?.hash.slice(0, 16)}…: the events from there on were replaced`, chain.events, event?.id ?? null);
      }
      return { ok: true, events: chain.events, head: chain.head, checkpoint };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
