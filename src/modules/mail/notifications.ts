import type { Db } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { EventListener } from '../events/writer.js';
import { mailJobOf, queueMail } from './queue.js';
import { mailRepository } from './repository.js';
import { handoffMail, newLeadMail } from './templates.js';

async function workspaceName(trx: Db, workspaceId: string): Promise<string> {
  const row = await trx.selectFrom('workspaces').select('name').where('id', '=', workspaceId).executeTakeFirst();
  return row?.name ?? 'your workspace';
}

/**
 * The event listener that emails members (issue 32, point 5): a new lead (`lead.created`) and a visitor asking
 * for a person (`conversation.updated` with `handoff_requested_at` set), each to the members who want it. The
 * emails are queued in the event's transaction; the dedupe key makes a request for a person one email per
 * member however many later updates carry it. Installed only when mail is on.
 */
export function mailNotifications(clock: Clock, publicUrl: string, wake: () => void = () => undefined): EventListener {
  return async (trx, event) => {
    const data = event.data as { id: string; name?: string | null; email?: string | null; phone?: string | null; handoff_requested_at?: string | null };
    let jobs;
    if (event.type === 'lead.created') {
      const recipients = await mailRepository.recipients(trx, event.workspace_id, 'notify_new_lead');
      if (recipients.length === 0) return;
      const workspace = await workspaceName(trx, event.workspace_id);
      const lead = { name: data.name ?? null, email: data.email ?? null, phone: data.phone ?? null };
      jobs = recipients.map((r) => mailJobOf(event.workspace_id, `lead:${data.id}:${r.user_id}`, newLeadMail(r.email, workspace, lead, `${publicUrl}/leads`), clock.now()));
    } else if (event.type === 'conversation.updated' && data.handoff_requested_at) {
      const recipients = await mailRepository.recipients(trx, event.workspace_id, 'notify_handoff');
      if (recipients.length === 0) return;
      const workspace = await workspaceName(trx, event.workspace_id);
      const link = `${publicUrl}/conversations/${data.id}`;
      jobs = recipients.map((r) => mailJobOf(event.workspace_id, `handoff:${data.id}:${data.handoff_requested_at}:${r.user_id}`, handoffMail(r.email, workspace, link), clock.now()));
    } else {
      return;
    }
    await queueMail(trx, jobs);
    wake();
  };
}
