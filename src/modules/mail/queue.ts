import type { Insertable, Kysely } from 'kysely';
import { newId } from '../../lib/ids.js';
import type { Database, Db, MailJobsTable, MailKind } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { ClaimableQueue } from '../runtime/queues.js';
import type { WorkerLog } from '../runtime/reply-worker.js';
import type { Mailer, MailMessage } from './mailer.js';
import { mailRepository, type MailJobRow } from './repository.js';

/** Seconds between a failed send and the next try; then the email is `failed`. */
const RETRY_SECONDS = [30, 300, 1800, 7200];
/** Emails one process sends at once. */
const CONCURRENCY = 2;
/** Longest one send may hold its lease beyond the job runner's. */
const SEND_BUDGET_MS = 60_000;

/** A queued email row for `message`, due now; `dedupeKey` keeps one per fact and recipient. */
export function mailJobOf(workspaceId: string, kind: MailKind, dedupeKey: string, message: MailMessage, now: Date): Insertable<MailJobsTable> {
  const at = now.toISOString();
  return {
    id: newId('mailJob', now.getTime()),
    workspace_id: workspaceId,
    dedupe_key: dedupeKey,
    kind,
    recipient: message.to,
    subject: message.subject,
    text_body: message.text,
    html_body: message.html,
    state: 'pending',
    attempts: 0,
    run_after: at,
    locked_until: null,
    last_error: null,
    digest_id: null,
    created_at: at,
    updated_at: at,
  };
}

/** Queues emails inside the caller's transaction (they are sent only if it commits). */
export async function queueMail(trx: Db, jobs: Insertable<MailJobsTable>[]): Promise<void> {
  await mailRepository.insert(trx, jobs);
}

/** What the mail runner is built from. */
export interface MailRunnerDeps {
  db: Kysely<Database>;
  clock: Clock;
  mailer: Mailer;
  log: WorkerLog;
  leaseMs: number;
}

/**
 * Queued emails as a queue of the one job runner (src/modules/runtime/reply-worker.ts): claimed with a lease,
 * sent through the mailer, retried on failure; a process that dies mid-send leaves a lease that lapses and
 * the email is claimed again (at least once).
 */
export function createMailRunner({ db, clock, mailer, log, leaseMs }: MailRunnerDeps): ClaimableQueue<MailJobRow> {
  async function handBack(job: MailJobRow): Promise<void> {
    await mailRepository
      .update(db, job.workspace_id, job.id, { state: 'pending', locked_until: null, updated_at: clock.now().toISOString() })
      .catch((error: unknown) => log.warn({ err: error, mail_job_id: job.id }, 'could not hand an email back'));
  }

  return {
    kind: 'mail',
    concurrency: CONCURRENCY,

    async claimNext() {
      const now = clock.now();
      return mailRepository.claimNext(db, now.toISOString(), new Date(now.getTime() + SEND_BUDGET_MS + leaseMs).toISOString());
    },

    release: handBack,

    async run(job, signal) {
      if (signal.aborted) return handBack(job);
      try {
        await mailer.send({ to: job.recipient, subject: job.subject, text: job.text_body, html: job.html_body });
        await mailRepository.update(db, job.workspace_id, job.id, { state: 'sent', locked_until: null, last_error: null, updated_at: clock.now().toISOString() });
      } catch (error) {
        const now = clock.now();
        const step = RETRY_SECONDS[Number(job.attempts) - 1];
        const message = (error instanceof Error ? error.message : String(error)).slice(0, 1000);
        await mailRepository
          .update(db, job.workspace_id, job.id, {
            state: step === undefined ? 'failed' : 'pending',
            run_after: step === undefined ? job.run_after : new Date(now.getTime() + step * 1000).toISOString(),
            locked_until: null,
            last_error: message,
            updated_at: now.toISOString(),
          })
          .catch((failure: unknown) => log.error({ err: failure, mail_job_id: job.id }, 'email outcome could not be recorded; it is retried when its lease lapses'));
        log.warn({ mail_job_id: job.id, error: message, attempts: job.attempts }, step === undefined ? 'email failed for good' : 'email failed; it will be retried');
      }
    },
  };
}
