import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the SMTP server received it. */
export interface CapturedMail {
  from: string;
  to: string[];
  /** The raw message (headers and body), quoted-printable decoded. */
  raw: string;
}

/** A real SMTP server on a free local port that keeps every message it accepts, and the logins it saw. */
export interface SmtpCapture {
  port: number;
  messages: CapturedMail[];
  logins: { username: string; password: string }[];
  /** Resolves with the next message to arrive (or the oldest one not yet taken). */
  next(): Promise<CapturedMail>;
  close(): Promise<void>;
}

// Lines over 76 characters (the link) come quoted-printable: soft breaks and =XX escapes.
function decodeQuotedPrintable(text: string): string {
  return text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Starts an SMTP server (plain, no STARTTLS, AUTH accepted only as `user`/`password`). */
export async function startSmtpCapture(user = { username: 'mailer', password: 'smtp-secret-pass' }): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  const logins: SmtpCapture['logins'] = [];
  let taken = 0;
  const waiting: ((mail: CapturedMail) => void)[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
      if (auth.username === user.username && auth.password === user.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: decodeQuotedPrintable(Buffer.concat(chunks).toString('utf8')),
        };
        messages.push(mail);
        const waiter = waiting.shift();
        if (waiter) {
          taken++;
          waiter(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    logins,
    next: () =>
      new Promise((resolve) => {
        if (taken < messages.length) resolve(messages[taken++]!);
        else waiting.push(resolve);
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The token of the reset link in a message (`…/reset-password?token=…`). */
export function resetTokenIn(mail: CapturedMail): string {
  const match = /\/reset-password\?token=([A-Za-z0-9_-]+)/.exec(mail.raw);
  if (!match) throw new Error(`no reset link in:\n${mail.raw}`);
  return match[1]!;
}
