import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { newId } from '../../src/lib/ids.js';
import type { MailJobsTable, WebhookDeliveriesTable } from '../../src/db/schema.js';
import { createRetentionSweeper } from '../../src/modules/retention/sweep.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';

// Finished mail jobs (their bodies hold one-time links) and webhook delivery logs are deleted once older
// than MAIL_RETENTION_DAYS / WEBHOOK_LOG_RETENTION_DAYS; pending and running rows never are.

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const DAY = 24 * 60 * 60_000;
const daysAgo = (days: number) => new Date(NOW - days * DAY).toISOString();

describe('retention configuration', () => {
  it('keeps finished mail 7 days and webhook logs 30 days by default, and takes other day counts', () => {
    expect(loadConfig({}).retention).toEqual({ mailDays: 7, webhookLogDays: 30 });
    expect(loadConfig({ MAIL_RETENTION_DAYS: '1', WEBHOOK_LOG_RETENTION_DAYS: '90' }).retention).toEqual({ mailDays: 1, webhookLogDays: 90 });
  });

  it.each([
    ['MAIL_RETENTION_DAYS', '0'],
    ['MAIL_RETENTION_DAYS', 'x'],
    ['MAIL_RETENTION_DAYS', '1.5'],
    ['WEBHOOK_LOG_RETENTION_DAYS', '0'],
    ['WEBHOOK_LOG_RETENTION_DAYS', 'x'],
    ['WEBHOOK_LOG_RETENTION_DAYS', '-3'],
  ])('refuses %s=%s with a message naming the variable', (name, raw) => {
    expect(() => loadConfig({ [name]: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: raw })).toThrow(new RegExp(`^${name} must be an integer between 1 and`));
  });
});

describe('retention sweep', () => {
  let t: TestApp;
  const clock = testClock(NOW);
  const logLines: string[] = [];
  let workspaceId: string;
  let endpointId: string;

  beforeAll(async () => {
    // No job runner: the old pending rows below must stay as inserted, not be claimed and sent.
    t = await createTestApp({ logLevel: 'info' }, { clock, replyWorker: false, logDestination: { write: (line) => void logLines.push(line) } });
    workspaceId = (await t.app.services.workspaces.create('Retention')).id;
    endpointId = newId('webhookEndpoint');
    await t.app.database.db
      .insertInto('webhook_endpoints')
      .values({
        id: endpointId, workspace_id: workspaceId, url: 'https://receiver.example.test/hook', description: null, events: '["*"]', enabled: 1,
        disabled_reason: null, secret: 'whsec_test', previous_secret: null, previous_secret_expires_at: null, failing_since: null,
        created_at: daysAgo(100), updated_at: daysAgo(100),
      })
      .execute();
  });

  afterAll(async () => {
    await t?.close();
  });

  beforeEach(async () => {
    clock.set(NOW);
    logLines.length = 0;
    const db = t.app.database.db;
    await db.deleteFrom('mail_jobs').execute();
    await db.deleteFrom('webhook_attempts').execute();
    await db.deleteFrom('webhook_deliveries').execute();
  });

  /** A mail job in `state`, queued (and due) `queuedDaysAgo`, last changed `updatedDaysAgo`. */
  async function mailJob(state: MailJobsTable['state'], updatedDaysAgo: number, queuedDaysAgo = updatedDaysAgo): Promise<string> {
    const id = newId('mailJob');
    await t.app.database.db
      .insertInto('mail_jobs')
      .values({
        id, workspace_id: workspaceId, dedupe_key: `test:${id}`, kind: 'invitation', recipient: 'member@example.test', subject: 'Reset your password',
        text_body: 'https://app.example.test/reset#one-time-token', html_body: '<p>reset</p>', state, attempts: state === 'pending' ? 0 : 1,
        run_after: daysAgo(queuedDaysAgo), locked_until: state === 'running' ? daysAgo(updatedDaysAgo - 0.01) : null, last_error: null,
        digest_id: null, created_at: daysAgo(queuedDaysAgo), updated_at: daysAgo(updatedDaysAgo),
      })
      .execute();
    return id;
  }

  /** A delivery in `state` with `attempts` attempts, queued `queuedDaysAgo`, last changed `updatedDaysAgo`. */
  async function delivery(state: WebhookDeliveriesTable['state'], updatedDaysAgo: number, attempts: number, queuedDaysAgo = updatedDaysAgo): Promise<string> {
    const db = t.app.database.db;
    const id = newId('webhookDelivery');
    await db
      .insertInto('webhook_deliveries')
      .values({
        id, workspace_id: workspaceId, endpoint_id: endpointId, event_id: newId('event'), event_type: 'lead.created', payload: '{}', state, attempts,
        run_after: daysAgo(queuedDaysAgo), locked_until: state === 'running' ? daysAgo(updatedDaysAgo - 0.01) : null, last_status: null, last_error: null,
        created_at: daysAgo(queuedDaysAgo), updated_at: daysAgo(updatedDaysAgo),
      })
      .execute();
    for (let i = 0; i < attempts; i++) {
      await db
        .insertInto('webhook_attempts')
        .values({
          id: newId('webhookAttempt'), workspace_id: workspaceId, delivery_id: id, attempted_at: daysAgo(updatedDaysAgo), status_code: 500,
          latency_ms: 12, response_excerpt: null, error: null, next_retry_at: null,
        })
        .execute();
    }
    return id;
  }

  async function remaining() {
    const db = t.app.database.db;
    const mail = await db.selectFrom('mail_jobs').select('id').execute();
    const deliveries = await db.selectFrom('webhook_deliveries').select('id').execute();
    const attempts = await db.selectFrom('webhook_attempts').select('delivery_id').execute();
    return {
      mail: mail.map((row) => row.id).sort(),
      deliveries: deliveries.map((row) => row.id).sort(),
      attemptsOf: (deliveryId: string) => attempts.filter((row) => row.delivery_id === deliveryId).length,
      attempts: attempts.length,
    };
  }

  const retentionLines = () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => String(line.msg).startsWith('retention:'));

  it('deletes exactly the finished rows past their retention, attempts included, and nothing on a second sweep', async () => {
    const oldSent = await mailJob('sent', 8);
    const oldFailed = await mailJob('failed', 20);
    // A notification held past the hourly budget (its digest told of it): never sent, swept like a sent one.
    const oldHeld = await mailJob('held', 8);
    const oldPending = await mailJob('pending', 60);
    const oldRunning = await mailJob('running', 60);
    // Queued long ago, but sent (last changed) within the 7 days: its age counts from the send.
    const recentSent = await mailJob('sent', 6, 10);

    const oldSucceeded = await delivery('succeeded', 31, 2);
    const oldFailedDelivery = await delivery('failed', 45, 3);
    const oldPendingDelivery = await delivery('pending', 90, 1);
    const oldRunningDelivery = await delivery('running', 90, 1);
    const recentSucceeded = await delivery('succeeded', 29, 1, 35);

    expect(await t.app.runtime.sweepRetention()).toEqual({ mailJobs: 3, webhookDeliveries: 2, webhookAttempts: 5 });

    const after = await remaining();
    expect(after.mail).toEqual([oldPending, oldRunning, recentSent].sort());
    expect(after.mail).not.toContain(oldSent);
    expect(after.mail).not.toContain(oldFailed);
    expect(after.mail).not.toContain(oldHeld);
    expect(after.deliveries).toEqual([oldPendingDelivery, oldRunningDelivery, recentSucceeded].sort());
    expect(after.attemptsOf(oldSucceeded)).toBe(0);
    expect(after.attemptsOf(oldFailedDelivery)).toBe(0);
    expect(after.attemptsOf(oldPendingDelivery)).toBe(1);
    expect(after.attemptsOf(oldRunningDelivery)).toBe(1);
    expect(after.attemptsOf(recentSucceeded)).toBe(1);
    expect(after.attempts).toBe(3);
    expect(retentionLines()).toEqual([
      expect.objectContaining({ level: 30, mail_jobs: 3, webhook_deliveries: 2, webhook_attempts: 5, more_remain: false }),
    ]);

    // Idempotent: nothing more is old enough, and a sweep that deletes nothing logs nothing.
    expect(await t.app.runtime.sweepRetention()).toEqual({ mailJobs: 0, webhookDeliveries: 0, webhookAttempts: 0 });
    expect(await remaining()).toMatchObject({ mail: after.mail, deliveries: after.deliveries, attempts: 3 });
    expect(retentionLines()).toHaveLength(1);

    // Two days on, the recent ones are past their retention too; pending and running rows still stay.
    clock.advance(2 * DAY);
    expect(await t.app.runtime.sweepRetention()).toEqual({ mailJobs: 1, webhookDeliveries: 1, webhookAttempts: 1 });
    const later = await remaining();
    expect(later.mail).toEqual([oldPending, oldRunning].sort());
    expect(later.deliveries).toEqual([oldPendingDelivery, oldRunningDelivery].sort());
    expect(later.attempts).toBe(2);
  });

  it('deletes in bounded batches and stops at the per-sweep cap; the next sweep continues', async () => {
    for (let i = 0; i < 5; i++) await mailJob('sent', 10);
    for (let i = 0; i < 4; i++) await delivery('succeeded', 40, 2);
    const keptMail = await mailJob('pending', 10);
    const sweeper = createRetentionSweeper({ db: t.app.database.db, clock, retention: t.config.retention, log: t.app.log, batchSize: 2, maxPerSweep: 3 });

    expect(await sweeper.sweep()).toEqual({ mailJobs: 3, webhookDeliveries: 3, webhookAttempts: 6 });
    expect(retentionLines().at(-1)).toMatchObject({ more_remain: true });
    expect(await sweeper.sweep()).toEqual({ mailJobs: 2, webhookDeliveries: 1, webhookAttempts: 2 });
    expect(retentionLines().at(-1)).toMatchObject({ more_remain: false });
    expect(await sweeper.sweep()).toEqual({ mailJobs: 0, webhookDeliveries: 0, webhookAttempts: 0 });
    expect(await remaining()).toMatchObject({ mail: [keptMail], deliveries: [], attempts: 0 });
  });

  it('is safe when several instances sweep at once: every old row is deleted once, nothing fails', async () => {
    for (let i = 0; i < 30; i++) await mailJob(i % 2 === 0 ? 'sent' : 'failed', 10);
    for (let i = 0; i < 30; i++) await delivery(i % 2 === 0 ? 'succeeded' : 'failed', 40, 1);
    const keptDelivery = await delivery('pending', 40, 1);
    // Two sweepers over the same database, as two instances would be (on PostgreSQL, separate connections).
    const sweepers = [0, 1].map(() => createRetentionSweeper({ db: t.app.database.db, clock, retention: t.config.retention, log: t.app.log, batchSize: 4 }));

    const results = await Promise.all([...sweepers, ...sweepers].map((sweeper) => sweeper.sweep()));

    const total = (key: 'mailJobs' | 'webhookDeliveries' | 'webhookAttempts') => results.reduce((sum, result) => sum + result[key], 0);
    expect({ mailJobs: total('mailJobs'), webhookDeliveries: total('webhookDeliveries'), webhookAttempts: total('webhookAttempts') }).toEqual({
      mailJobs: 30,
      webhookDeliveries: 30,
      webhookAttempts: 30,
    });
    expect(await remaining()).toMatchObject({ mail: [], deliveries: [keptDelivery], attempts: 1 });
  });
});
