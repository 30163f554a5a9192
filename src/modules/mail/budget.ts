import type { Insertable } from 'kysely';
import type { Db, MailJobsTable } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { mailJobOf } from './queue.js';
import { mailRepository } from './repository.js';
import { digestMail } from './templates.js';

const HOUR_MS = 60 * 60_000;

/** What the hourly notification budget is built from. */
export interface NotificationBudget {
  /** Notification emails a workspace sends one by one per rolling hour (MAIL_NOTIFY_PER_HOUR). */
  perHour: number;
  /** Where a digest sends its reader: the dashboard. */
  dashboardUrl: string;
}

/** The workspace whose notifications are queued. */
export interface BudgetWorkspace {
  id: string;
  name: string;
}

/**
 * Queues notification emails (new leads, requests for a person) within the workspace's hourly budget, in
 * the transaction of the event they tell of, created at `now`. A fact already told (its dedupe key stored) is skipped before
 * counting. The budget is counted in the database, over the workspace's notifications of the last hour that
 * went out one by one, so it holds across instances: the event's transaction already holds the workspace
 * row (its event sequence, src/modules/events/repository.ts), so on PostgreSQL two transactions of one
 * workspace count one after the other, and SQLite has one writer. Past the budget, each email is stored
 * `held` and counted in its recipient's one pending digest (docs/decisions/0028-notification-mail-budget.md).
 */
export async function queueNotifications(trx: Db, budget: NotificationBudget, workspace: BudgetWorkspace, jobs: Insertable<MailJobsTable>[], now: Date): Promise<void> {
  const stored = await mailRepository.storedKeys(trx, jobs.map((job) => job.dedupe_key));
  const fresh = jobs.filter((job) => !stored.has(job.dedupe_key));
  if (fresh.length === 0) return;
  const hourAgo = new Date(now.getTime() - HOUR_MS).toISOString();
  const before = await mailRepository.notificationsSince(trx, workspace.id, hourAgo, budget.perHour);
  const room = Math.max(0, budget.perHour - before.count);
  await mailRepository.insert(trx, fresh.slice(0, room));
  const held = fresh.slice(room);
  if (held.length === 0) return;

  // The budget allows one more email when the oldest of the hour's last `perHour` leaves the window.
  const window = await mailRepository.notificationsSince(trx, workspace.id, hourAgo, budget.perHour);
  const opensAt = Date.parse(window.oldest ?? now.toISOString()) + HOUR_MS;
  const byRecipient = new Map<string, Insertable<MailJobsTable>[]>();
  for (const job of held) byRecipient.set(job.recipient, [...(byRecipient.get(job.recipient) ?? []), job]);
  for (const [recipient, recipientJobs] of byRecipient) await holdForDigest(trx, budget, workspace, recipient, recipientJobs, now, opensAt);
}

/**
 * Stores a recipient's notifications `held`, counted in their digest: the one not yet claimed for sending,
 * else a new one, due when the budget allows another email and never within an hour of the previous digest
 * (one digest per recipient per window). The digest's text is rewritten with the counts so far.
 */
async function holdForDigest(trx: Db, budget: NotificationBudget, workspace: BudgetWorkspace, recipient: string, jobs: Insertable<MailJobsTable>[], now: Date, opensAt: number): Promise<void> {
  const at = now.toISOString();
  const pending = await mailRepository.lockPendingDigest(trx, workspace.id, recipient, at);
  const digestId = pending?.id ?? newId('mailJob', now.getTime());
  await mailRepository.insert(trx, jobs.map((job) => ({ ...job, state: 'held' as const, digest_id: digestId })));
  const counts = await mailRepository.heldCounts(trx, workspace.id, digestId);
  const message = digestMail(recipient, workspace.name, { newLeads: counts.new_lead ?? 0, handoffs: counts.handoff ?? 0 }, pending?.created_at ?? at, budget.perHour, budget.dashboardUrl);
  if (pending) {
    await mailRepository.update(trx, workspace.id, digestId, { subject: message.subject, text_body: message.text, html_body: message.html });
    return;
  }
  const previous = await mailRepository.latestDigestDue(trx, workspace.id, recipient, new Date(now.getTime() - HOUR_MS).toISOString());
  const due = Math.max(opensAt, previous === null ? 0 : Date.parse(previous) + HOUR_MS);
  await mailRepository.insert(trx, [{ ...mailJobOf(workspace.id, 'digest', `digest:${digestId}`, message, now), id: digestId, run_after: new Date(due).toISOString() }]);
}
