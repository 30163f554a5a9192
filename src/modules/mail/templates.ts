import type { MailMessage } from './mailer.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe to put into HTML (element content and quoted attributes). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A short HTML body: paragraphs and one button-like link, no remote images or styles to block. */
function htmlBody(paragraphs: string[], link: { href: string; label: string }, after: string[]): string {
  const p = (text: string) => `<p style="margin:0 0 16px">${escapeHtml(text)}</p>`;
  return [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;font-size:15px;line-height:1.5;color:#1f2937">',
    ...paragraphs.map(p),
    `<p style="margin:0 0 16px"><a href="${escapeHtml(link.href)}" style="display:inline-block;padding:10px 16px;background:#2563eb;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(link.label)}</a></p>`,
    `<p style="margin:0 0 16px;font-size:13px;color:#6b7280">${escapeHtml(link.href)}</p>`,
    ...after.map(p),
    '</body></html>',
  ].join('\n');
}

/** The password reset email: the one-time link and how long it works. */
export function passwordResetMail(to: string, link: string, validMinutes: number): MailMessage {
  const intro = 'Someone (hopefully you) asked to reset the password of your account.';
  const validity = `The link works once, for ${validMinutes} minutes.`;
  const ignore = 'If you did not ask for this, ignore this email: your password stays as it is.';
  return {
    to,
    subject: 'Reset your password',
    text: `${intro}\n\nChoose a new password here:\n${link}\n\n${validity}\n${ignore}\n`,
    html: htmlBody([intro, validity], { href: link, label: 'Choose a new password' }, [ignore]),
  };
}

/** A new lead, to a member who wants them: who it is and where to see it. */
export function newLeadMail(to: string, workspace: string, lead: { name: string | null; email: string | null; phone?: string | null }, link: string): MailMessage {
  const who = [lead.name, lead.email, lead.phone].filter((part): part is string => Boolean(part)).join(', ') || 'someone who left no name';
  const intro = `A new lead in ${workspace}: ${who}.`;
  const why = 'You get this because you asked for emails about new leads; change it in Settings → Account.';
  return {
    to,
    subject: `New lead: ${who}`.slice(0, 200),
    text: `${intro}\n\nSee it here:\n${link}\n\n${why}\n`,
    html: htmlBody([intro], { href: link, label: 'Open the lead' }, [why]),
  };
}

/** A visitor asks for a person, to a member who wants to know. */
export function handoffMail(to: string, workspace: string, link: string): MailMessage {
  const intro = `A visitor in ${workspace} asked to talk to a person.`;
  const why = 'You get this because you asked for emails when a visitor asks for a person; change it in Settings → Account.';
  return {
    to,
    subject: 'A visitor asks for a person',
    text: `${intro}\n\nAnswer them here:\n${link}\n\n${why}\n`,
    html: htmlBody([intro], { href: link, label: 'Open the conversation' }, [why]),
  };
}

/** An invitation for one email: the workspace, the role and the link. */
export function invitationMail(to: string, workspace: string, role: string, link: string, expiresAt: string): MailMessage {
  const intro = `You are invited to join ${workspace} as ${role}.`;
  const validity = `The link works until ${expiresAt.slice(0, 10)}.`;
  return {
    to,
    subject: `Join ${workspace}`.slice(0, 200),
    text: `${intro}\n\nAccept here:\n${link}\n\n${validity}\n`,
    html: htmlBody([intro, validity], { href: link, label: 'Accept the invitation' }, []),
  };
}
