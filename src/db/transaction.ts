import type { Kysely, Transaction } from 'kysely';
import type { OperationContext } from '../lib/actor.js';
import type { Database } from './schema.js';

/** Runs `work` in the operation's transaction when it has one, else in a new transaction. */
export async function inTransaction<T>(
  db: Kysely<Database>,
  ctx: Pick<OperationContext, 'trx'>,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (ctx.trx) return work(ctx.trx);
  return db.transaction().execute(work);
}
