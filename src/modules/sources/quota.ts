import type { Kysely } from 'kysely';
import type { SourcesConfig } from '../../config.js';
import { transactionLock } from '../../db/dialect.js';
import type { Database, Db } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { sourceRepository } from './repository.js';

/** Sources and bytes of stored files, held or asked for. */
interface Usage {
  sources: number;
  bytes: number;
}

const MB = 1024 * 1024;

function megabytes(bytes: number): string {
  return `${(bytes / MB).toFixed(bytes < 10 * MB ? 2 : 0)} MB`;
}

/**
 * Refuses one more source, of `requestedBytes` stored bytes, when it would take the workspace past either
 * quota: 409 quota_exceeded with the figures (`quota`, `limit`, `used`, `requested_bytes`; `uploading` and
 * `uploading_bytes` when uploads still being received are counted too). A quota passed by what is stored
 * alone is named first: uploads being received may still fail, so they decide only when nothing else does.
 */
function assertRoom(quota: SourcesConfig['quota'], used: Usage, requestedBytes: number, uploading: Usage | undefined): void {
  const none = { sources: 0, bytes: 0 };
  for (const pending of uploading ? [none, uploading] : [none]) {
    const counted = pending === uploading ? uploading : undefined;
    if (used.sources + pending.sources + 1 > quota.sources) {
      const also = counted ? `, and ${counted.sources} more being uploaded` : '';
      throw new AppError(
        'quota_exceeded',
        `This workspace has ${used.sources} knowledge sources${also}; it may have ${quota.sources} (SOURCE_MAX_PER_WORKSPACE). Delete a source to add another.`,
        { quota: 'sources', limit: quota.sources, used: used.sources, ...(counted ? { uploading: counted.sources } : {}) },
      );
    }
    if (requestedBytes > 0 && used.bytes + pending.bytes + requestedBytes > quota.totalBytes) {
      const also = counted ? `, and ${megabytes(counted.bytes)} more are being uploaded` : '';
      throw new AppError(
        'quota_exceeded',
        `The file (${megabytes(requestedBytes)}) does not fit: this workspace's files take ${megabytes(used.bytes)} of ${megabytes(quota.totalBytes)} (SOURCE_MAX_TOTAL_MB)${also}. Delete a file source to make room.`,
        { quota: 'total_bytes', limit: quota.totalBytes, used: used.bytes, requested_bytes: requestedBytes, ...(counted ? { uploading_bytes: counted.bytes } : {}) },
      );
    }
  }
}

/**
 * Per-workspace quotas on knowledge sources (SOURCE_MAX_PER_WORKSPACE sources, every agent's together, and
 * SOURCE_MAX_TOTAL_MB of stored files). The creating transaction decides (`checkWithNew`); uploads are also admitted
 * before their bodies are read (`admitUpload`), so parallel uploads that together cannot fit are refused
 * without each being held in memory first.
 */
export function createSourceQuota(db: Kysely<Database>, quota: SourcesConfig['quota']) {
  // Uploads being received or stored by this process, per workspace: counted beside what is stored by the
  // early check. The creating transaction's check stands alone (other processes have their own).
  const uploading = new Map<string, Usage>();

  function hold(workspaceId: string, sign: 1 | -1, fileBytes: number): void {
    const current = uploading.get(workspaceId) ?? { sources: 0, bytes: 0 };
    const next = { sources: current.sources + sign, bytes: current.bytes + sign * fileBytes };
    if (next.sources <= 0) uploading.delete(workspaceId);
    else uploading.set(workspaceId, next);
  }

  return {
    /**
     * In the creating transaction, once its one new source (of `requestedBytes` stored bytes) is inserted:
     * from here to commit, creations in one workspace are serialised (PostgreSQL: an advisory lock until
     * commit; SQLite: the one writer), so each counts what the others committed and concurrent ones cannot
     * together pass the quotas. A refusal rolls the insert back.
     */
    async checkWithNew(trx: Db, workspaceId: string, requestedBytes: number): Promise<void> {
      await transactionLock(trx, `sources-quota:${workspaceId}`);
      const usage = await sourceRepository.usage(trx, workspaceId);
      assertRoom(quota, { sources: usage.sources - 1, bytes: usage.bytes - requestedBytes }, requestedBytes, undefined);
    },

    /** Before an upload's body is read: refuses a file of at least `fileBytes` that cannot fit; returns the release of what it holds. */
    async admitUpload(workspaceId: string, fileBytes: number): Promise<() => void> {
      const used = await sourceRepository.usage(db, workspaceId);
      assertRoom(quota, used, fileBytes, uploading.get(workspaceId));
      hold(workspaceId, 1, fileBytes);
      let held = true;
      return () => {
        if (held) hold(workspaceId, -1, fileBytes);
        held = false;
      };
    },
  };
}
