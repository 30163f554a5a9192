import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext } from '../../lib/actor.js';
import type { AuditWriter } from '../audit/writer.js';
import { mailRepository } from './repository.js';

/** What a member is emailed about in the current workspace, and whether this instance sends mail at all. */
export interface NotificationPreferencesView {
  notify_new_lead: boolean;
  notify_handoff: boolean;
  /** False when SMTP_URL is unset: nothing is emailed, whatever the preferences. */
  mail_enabled: boolean;
}

/** The signed-in member's email preferences, per workspace (a membership's columns). */
export function createMailPreferenceService(db: Kysely<Database>, audit: AuditWriter, mailEnabled: boolean) {
  async function current(executor: Kysely<Database>, ctx: OperationContext) {
    const row = await mailRepository.preferences(executor, ctx.actor.workspaceId, ctx.actor.id);
    if (!row) throw AppError.notFound('member', ctx.actor.id);
    return row;
  }
  const present = (row: { notify_new_lead: number; notify_handoff: number }): NotificationPreferencesView => ({
    notify_new_lead: row.notify_new_lead === 1,
    notify_handoff: row.notify_handoff === 1,
    mail_enabled: mailEnabled,
  });

  return {
    /** The actor's preferences in their workspace. */
    async get(ctx: OperationContext): Promise<NotificationPreferencesView> {
      return present(await current(db, ctx));
    },

    /** Changes the actor's preferences in their workspace (audited when something changes). */
    async update(ctx: OperationContext, input: { notify_new_lead?: boolean; notify_handoff?: boolean }): Promise<NotificationPreferencesView> {
      return inTransaction(db, ctx, async (trx) => {
        const before = await current(trx, ctx);
        const after = {
          notify_new_lead: input.notify_new_lead === undefined ? before.notify_new_lead : Number(input.notify_new_lead),
          notify_handoff: input.notify_handoff === undefined ? before.notify_handoff : Number(input.notify_handoff),
        };
        const changes: Record<string, { before: boolean; after: boolean }> = {};
        for (const key of ['notify_new_lead', 'notify_handoff'] as const) {
          if (before[key] !== after[key]) changes[key] = { before: before[key] === 1, after: after[key] === 1 };
        }
        if (Object.keys(changes).length > 0) {
          await mailRepository.setPreferences(trx, ctx.actor.workspaceId, ctx.actor.id, after);
          await audit.record(trx, ctx, { action: 'member.notifications_changed', target: { type: 'user', id: ctx.actor.id }, changes });
        }
        return present(after);
      });
    },
  };
}

export type MailPreferenceService = ReturnType<typeof createMailPreferenceService>;
