import type { MailMessage } from './mailer.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe to put into HTML (element content and quoted attributes). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * Text typed by someone else (a visitor, or a name the business chose) on one line: control and format
 * characters (line breaks, zero-width and direction marks) become spaces, runs of spaces one, at most
 * `max` characters. A visitor cannot then lay out lines of their own in the email.
 */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * A short HTML body: paragraphs, then what a visitor typed (escaped text in a quoted block, never a link),
 * one button-like link, no remote images or styles to block.
 */
function htmlBody(paragraphs: string[], link: { href: string; label: string }, after: string[], quoted: string[] = []): string {
  const p = (text: string) => `<p style="margin:0 0 16px">${escapeHtml(text)}</p>`;
  return [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;font-size:15px;line-height:1.5;color:#1f2937">',
    ...paragraphs.map(p),
    ...(quoted.length > 0 ? [`<p style="margin:0 0 16px;padding-left:12px;border-left:3px solid #d1d5db">${quoted.map(escapeHtml).join('<br>')}</p>`] : []),
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

/** Where a notification comes from: the workspace and, when known, the agent (names the business wrote). */
export interface NotificationSource {
  workspace: string;
  agent: string | null;
}

/** A new lead's contact details, as the visitor (or a member) typed them. */
export interface LeadDetails {
  name: string | null;
  email: string | null;
  phone?: string | null;
}

const QUOTED_FIELD_MAX = 200;

/**
 * A new lead, to a member who wants them. The subject names only the agent (or the workspace) and the
 * event: visitor text never goes into a subject line. The details are in the body, on their own lines.
 */
export function newLeadMail(to: string, source: NotificationSource, lead: LeadDetails, link: string): MailMessage {
  const workspace = oneLine(source.workspace, 100);
  const agent = source.agent === null ? null : oneLine(source.agent, 100);
  const fields = [['Name', lead.name], ['Email', lead.email], ['Phone', lead.phone ?? null]] as const;
  const details = fields.filter(([, value]) => value).map(([label, value]) => `${label}: ${oneLine(value!, QUOTED_FIELD_MAX)}`);
  const intro = agent === null ? `A new lead in ${workspace}.` : `${agent} has a new lead in ${workspace}.`;
  const heading = details.length > 0 ? 'What was entered (as typed, unchecked):' : 'No name, email or phone was left.';
  const why = 'You get this because you asked for emails about new leads; change it in Settings → Account.';
  return {
    to,
    subject: agent === null ? `New lead in ${workspace}` : `New lead from ${agent}`,
    text: `${intro}\n\n${heading}\n${details.join('\n')}${details.length > 0 ? '\n' : ''}\nSee it here:\n${link}\n\n${why}\n`,
    html: htmlBody([intro, heading], { href: link, label: 'Open the lead' }, [why], details),
  };
}

/** A visitor asks for a person, to a member who wants to know; the subject names the agent (or the workspace). */
export function handoffMail(to: string, source: NotificationSource, link: string): MailMessage {
  const workspace = oneLine(source.workspace, 100);
  const agent = source.agent === null ? null : oneLine(source.agent, 100);
  const intro = agent === null ? `A visitor in ${workspace} asked to talk to a person.` : `A visitor talking to ${agent} in ${workspace} asked to talk to a person.`;
  const why = 'You get this because you asked for emails when a visitor asks for a person; change it in Settings → Account.';
  return {
    to,
    subject: agent === null ? `A visitor asks for a person in ${workspace}` : `A visitor asks for a person: ${agent}`,
    text: `${intro}\n\nAnswer them here:\n${link}\n\n${why}\n`,
    html: htmlBody([intro], { href: link, label: 'Open the conversation' }, [why]),
  };
}

/** What a digest tells of: the notifications held back past the budget, counted per kind. */
export interface DigestCounts {
  newLeads: number;
  handoffs: number;
}

/**
 * The one email that stands for the notifications a workspace could not send one by one within its hourly
 * budget: how many of each, since when, and where to see them. No visitor text at all.
 */
export function digestMail(to: string, workspace: string, counts: DigestCounts, since: string, perHour: number, link: string): MailMessage {
  const name = oneLine(workspace, 100);
  const parts = [
    counts.newLeads > 0 ? `${counts.newLeads} more new ${counts.newLeads === 1 ? 'lead' : 'leads'}` : null,
    counts.handoffs > 0 ? `${counts.handoffs} more ${counts.handoffs === 1 ? 'request' : 'requests'} for a person` : null,
  ].filter((part): part is string => part !== null);
  const what = parts.join(' and ') || 'More activity';
  const intro = `${what} in ${name} since ${since.slice(0, 16).replace('T', ' ')} UTC: see the dashboard.`;
  const why = `${name} sends at most ${perHour} notification ${perHour === 1 ? 'email' : 'emails'} an hour; what comes beyond that is summed up in one email like this, at most once an hour.`;
  return {
    to,
    subject: `${what} in ${name}`,
    text: `${intro}\n\n${link}\n\n${why}\n`,
    html: htmlBody([intro], { href: link, label: 'Open the dashboard' }, [why]),
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
