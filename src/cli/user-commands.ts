import readline from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from './commands.js';
import { UsageError } from './commands.js';

/**
 * The first line of standard input: piped (`printf '%s\n' "$PW" | …`), or typed at a terminal with echo
 * off, so the password is never shown or printed.
 */
async function readPasswordLine(): Promise<string> {
  const terminal = process.stdin.isTTY === true;
  if (terminal) process.stderr.write('New password (not shown): ');
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = readline.createInterface({ input: process.stdin, output: silent, terminal });
  try {
    for await (const line of lines) return line;
    return '';
  } finally {
    lines.close();
    if (terminal) process.stderr.write('\n');
  }
}

/** Operator commands on dashboard accounts. */
export const userCommands: Record<string, Command> = {
  'user reset-password': {
    usage: 'user reset-password --email EMAIL [--password NEW] [--json]\n    without --password the new password is read from the first line of stdin; every session of the user ends',
    options: { email: { type: 'string' }, password: { type: 'string' }, json: { type: 'boolean' } },
    async run({ services }, values) {
      const email = values.email;
      if (typeof email !== 'string' || email.trim() === '') throw new UsageError('--email is required');
      const user = await services.users.findByEmail(email);
      if (!user) throw new UsageError(`no account with the email "${email.trim().toLowerCase()}"`);
      const password = typeof values.password === 'string' ? values.password : await readPasswordLine();
      await services.users.setPassword(user.id, password, { type: 'operator', name: 'cli' });
      return {
        json: { user_id: user.id, email: user.email, sessions_ended: true },
        text: `password of ${user.email} (${user.id}) reset; every session of this user has ended`,
      };
    },
  },
};
