import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { Clock } from '../../lib/clock.js';
import { mailRepository } from '../mail/repository.js';
import type { WorkerLog } from '../runtime/reply-worker.js';
import { webhookDeliveryRepository } from '../webhooks/repository.js';

/** Rows one statement deletes: short enough that each batch holds the writer (SQLite) only briefly. */
export const RETENTION_BATCH = 1000;
/**
 * At most this many rows of each table per sweep: a backlog (the first sweep after an upgrade, or after
 * downtime) drains over several sweeps instead of holding the writer for minutes.
 */
export const MAX_DELETES_PER_SWEEP = 20_000;

const DAY_MS = 24 * 60 * 60_000;

/** What one retention sweep deleted. */
export interface RetentionSweepResult {
  mailJobs: number;
  webhookDeliveries: number;
  webhookAttempts: number;
}

/**
 * Deletes finished mail jobs (sent, failed, held past the notification budget) after `mailDays` and finished
 * webhook deliveries (succeeded, failed) with their attempts after `webhookLogDays`, both counted from their
 * last change. Sent mail holds one-time links (password resets, invitations) in clear text, so keeping it is a
 * liability. Pending and running rows are never deleted. Runs whether or not mail is on (rows left from when
 * it was). Several instances may sweep at once: each batch takes rows no other sweep holds, and a row deleted
 * twice is simply not found the second time.
 */
export function createRetentionSweeper(deps: {
  db: Kysely<Database>;
  clock: Clock;
  retention: { mailDays: number; webhookLogDays: number };
  log: WorkerLog;
  batchSize?: number;
  maxPerSweep?: number;
}) {
  const { db, clock, retention, log, batchSize = RETENTION_BATCH, maxPerSweep = MAX_DELETES_PER_SWEEP } = deps;

  /** Runs `deleteBatch` until a batch comes back short or the cap is reached; true when the cap stopped it. */
  async function drain(deleteBatch: (limit: number) => Promise<number>): Promise<{ deleted: number; capped: boolean }> {
    let deleted = 0;
    while (deleted < maxPerSweep) {
      const limit = Math.min(batchSize, maxPerSweep - deleted);
      const count = await deleteBatch(limit);
      deleted += count;
      if (count < limit) return { deleted, capped: false };
    }
    return { deleted, capped: true };
  }

  const cutoff = (days: number) => new Date(clock.now().getTime() - days * DAY_MS).toISOString();

  return {
    /** One sweep; returns how many rows it deleted. */
    async sweep(): Promise<RetentionSweepResult> {
      const mailCutoff = cutoff(retention.mailDays);
      const mail = await drain((limit) => mailRepository.deleteFinishedBefore(db, mailCutoff, limit));

      const webhookCutoff = cutoff(retention.webhookLogDays);
      let webhookAttempts = 0;
      // One transaction per batch: the attempts go with their deliveries, or neither does.
      const webhooks = await drain(async (limit) => {
        const batch = await inTransaction(db, {}, (trx) => webhookDeliveryRepository.deleteFinishedBefore(trx, webhookCutoff, limit));
        webhookAttempts += batch.attempts;
        return batch.deliveries;
      });

      const result = { mailJobs: mail.deleted, webhookDeliveries: webhooks.deleted, webhookAttempts };
      if (result.mailJobs + result.webhookDeliveries > 0) {
        log.info(
          { mail_jobs: result.mailJobs, webhook_deliveries: result.webhookDeliveries, webhook_attempts: webhookAttempts, more_remain: mail.capped || webhooks.capped },
          'retention: deleted finished mail jobs and webhook deliveries past their retention',
        );
      }
      return result;
    },
  };
}
