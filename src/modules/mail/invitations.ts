import type { Db, InvitationsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { mailJobOf, queueMail } from './queue.js';
import { mailRepository } from './repository.js';
import { invitationMail } from './templates.js';

/** Runs in the transaction that creates an invitation, with its token (the one moment it is known). */
export type InvitationCreated = (trx: Db, invitation: InvitationsTable, token: string) => Promise<void>;

/**
 * Emails an invitation that names an email: the link the dashboard also shows, queued with the invitation
 * (it goes only if the invitation is created). Installed only when mail is on.
 */
export function invitationMailer(clock: Clock, publicUrl: string, wake: () => void = () => undefined): InvitationCreated {
  return async (trx, invitation, token) => {
    if (!invitation.email) return;
    const workspace = await mailRepository.workspaceName(trx, invitation.workspace_id);
    const link = `${publicUrl}/invite#${token}`;
    const message = invitationMail(invitation.email, workspace ?? 'a workspace', invitation.role, link, invitation.expires_at);
    await queueMail(trx, [mailJobOf(invitation.workspace_id, 'invitation', `invitation:${invitation.id}`, message, clock.now())]);
    wake();
  };
}
