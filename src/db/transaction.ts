import type { Kysely, Transaction } from 'kysely';
import type { OperationContext } from '../lib/actor.js';
import { isRetryableTransactionError } from './dialect.js';
import type { Database } from './schema.js';

const ATTEMPTS = 5;

/**
 * Runs `work` in the operation's transaction when it has one (the caller owns commit and retries), else in
 * a new transaction that is retried when the database asks for it (serialization failure, deadlock).
 */
export async function inTransaction<T>(
  db: Kysely<Database>,
  ctx: Pick<OperationContext, 'trx'>,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (ctx.trx) return work(ctx.trx);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryableTransactionError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 10 + Math.random() * 20));
    }
  }
}
