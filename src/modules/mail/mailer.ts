import nodemailer from 'nodemailer';
import type { MailConfig } from '../../config.js';

/** One email: plain text for every client, simple HTML for those that show it. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends email through the configured SMTP server, or nothing at all when mail is off. */
export interface Mailer {
  /** False when SMTP_URL is unset: `send` does nothing. */
  readonly enabled: boolean;
  /** Where mail goes, for log lines: `host:port`, never the credentials. Null when off. */
  readonly server: string | null;
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** A mailer that sends nothing (SMTP_URL unset, the CLI). */
export const mailOff: Mailer = { enabled: false, server: null, send: async () => undefined, close: () => undefined };

/** The SMTP mailer of `config` (nodemailer, one pooled transport), or `mailOff` when mail is not configured. */
export function createMailer(config: MailConfig | null): Mailer {
  if (config === null) return mailOff;
  const url = new URL(config.url);
  const secure = url.protocol === 'smtps:';
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    // A mail server that stops answering must not hold a background task for nodemailer's default minutes.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    // nodemailer's own logger stays off: it would print the AUTH exchange.
    logger: false,
  });
  return {
    enabled: true,
    server: `${url.hostname}:${url.port || (secure ? 465 : 587)}`,
    async send(message) {
      await transport.sendMail({ from: config.from, ...message });
    },
    close: () => transport.close(),
  };
}
