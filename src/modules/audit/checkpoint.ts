import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../lib/canonical-json.js';

/**
 * A signed statement that a workspace's chain held this event, with this hash, at this time. Kept outside
 * the database (see docs/decisions/0019-audit-checkpoints.md), it catches what the chain alone cannot: the
 * newest events removed together with the head recorded on the workspace row.
 */
export interface AuditCheckpoint {
  object: 'audit_checkpoint';
  /** What `signature` is: an HMAC-SHA256 of the canonical JSON of every other field, keyed by AUDIT_SIGNING_KEY. */
  algorithm: 'hmac-sha256';
  workspace_id: string;
  /** Sequence number of the newest event when the checkpoint was taken. */
  seq: number;
  /** That event's hash. */
  hash: string;
  created_at: string;
  /** Lowercase hex. */
  signature: string;
}

type SignedFields = Omit<AuditCheckpoint, 'signature'>;

const FIELDS = ['object', 'algorithm', 'workspace_id', 'seq', 'hash', 'created_at', 'signature'] as const;

function signatureOf(fields: SignedFields, key: string): string {
  const { object, algorithm, workspace_id, seq, hash, created_at } = fields;
  return createHmac('sha256', key).update(canonicalJson({ object, algorithm, workspace_id, seq, hash, created_at })).digest('hex');
}

/** Signs a checkpoint of the event `seq` (with `hash`) of a workspace's chain. */
export function signCheckpoint(head: { workspaceId: string; seq: number; hash: string }, createdAt: Date, key: string): AuditCheckpoint {
  const fields: SignedFields = {
    object: 'audit_checkpoint',
    algorithm: 'hmac-sha256',
    workspace_id: head.workspaceId,
    seq: head.seq,
    hash: head.hash,
    created_at: createdAt.toISOString(),
  };
  return { ...fields, signature: signatureOf(fields, key) };
}

/** Whether the checkpoint's signature is the one `key` gives for its fields (compared in constant time). */
export function checkpointSignatureHolds(checkpoint: AuditCheckpoint, key: string): boolean {
  const expected = Buffer.from(signatureOf(checkpoint, key), 'hex');
  const given = Buffer.from(checkpoint.signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Reads a checkpoint from its JSON text; null when the text is not exactly a checkpoint's fields. */
export function parseCheckpoint(text: string): AuditCheckpoint | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length !== FIELDS.length || !FIELDS.every((field) => keys.includes(field))) return null;
  const wellFormed =
    record.object === 'audit_checkpoint' &&
    record.algorithm === 'hmac-sha256' &&
    typeof record.workspace_id === 'string' &&
    Number.isSafeInteger(record.seq) &&
    (record.seq as number) >= 0 &&
    typeof record.hash === 'string' &&
    typeof record.created_at === 'string' &&
    typeof record.signature === 'string' &&
    /^[0-9a-f]{64}$/.test(record.signature);
  return wellFormed ? (record as unknown as AuditCheckpoint) : null;
}
