import type { Insertable } from 'kysely';
import type { Db, MailJobsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { EventListener } from '../events/writer.js';
import { queueNotifications, type NotificationBudget } from './budget.js';
import { mailJobOf } from './queue.js';
import { mailRepository } from './repository.js';
import { handoffMail, newLeadMail, type NotificationSource } from './templates.js';

/** The workspace's name and, when the fact has one, its agent's: what a notification's subject may name. */
async function sourceOf(trx: Db, workspaceId: string, chatbotId: string | null | undefined): Promise<NotificationSource> {
  const workspace = (await mailRepository.workspaceName(trx, workspaceId)) ?? 'your workspace';
  const agent = chatbotId ? ((await mailRepository.agentName(trx, workspaceId, chatbotId)) ?? null) : null;
  return { workspace, agent };
}

/**
 * The event listener that emails members: a new lead (`lead.created`) and a visitor asking for a person
 * (`conversation.updated` with `handoff_requested_at` set), each to the members who want it. The emails are
 * queued in the event's transaction, within the workspace's hourly budget (budget.ts: past it, one digest
 * per recipient); the dedupe key makes a request for a person one email per member however many later
 * updates carry it. Installed only when mail is on.
 */
export function mailNotifications(clock: Clock, perHour: number, publicUrl: string, wake: () => void = () => undefined): EventListener {
  const budget: NotificationBudget = { perHour, dashboardUrl: `${publicUrl}/` };
  return async (trx, event) => {
    const data = event.data as { id: string; chatbot_id?: string | null; name?: string | null; email?: string | null; phone?: string | null; handoff_requested_at?: string | null };
    const now = clock.now();
    let jobs: Insertable<MailJobsTable>[];
    let source: NotificationSource;
    if (event.type === 'lead.created') {
      const recipients = await mailRepository.recipients(trx, event.workspace_id, 'notify_new_lead');
      if (recipients.length === 0) return;
      source = await sourceOf(trx, event.workspace_id, data.chatbot_id);
      const lead = { name: data.name ?? null, email: data.email ?? null, phone: data.phone ?? null };
      jobs = recipients.map((r) => mailJobOf(event.workspace_id, 'new_lead', `lead:${data.id}:${r.user_id}`, newLeadMail(r.email, source, lead, `${publicUrl}/leads`), now));
    } else if (event.type === 'conversation.updated' && data.handoff_requested_at) {
      const recipients = await mailRepository.recipients(trx, event.workspace_id, 'notify_handoff');
      if (recipients.length === 0) return;
      source = await sourceOf(trx, event.workspace_id, data.chatbot_id);
      const link = `${publicUrl}/conversations/${data.id}`;
      jobs = recipients.map((r) => mailJobOf(event.workspace_id, 'handoff', `handoff:${data.id}:${data.handoff_requested_at}:${r.user_id}`, handoffMail(r.email, source, link), now));
    } else {
      return;
    }
    await queueNotifications(trx, budget, { id: event.workspace_id, name: source.workspace }, jobs, now);
    wake();
  };
}
