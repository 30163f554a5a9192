import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../../src/db/dialect.js';
import type { Database } from '../../src/db/schema.js';
import type { AuditEventView } from '../../src/modules/audit/service.js';

/** Shared helpers of the write-guarantee suites (not a test file itself). */

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export { expectProblem, send } from '../helpers/http.js';
export { testClock, type TestClock } from '../helpers/clock.js';

/** Every stored idempotency record of an Idempotency-Key (for any API key). */
export function idempotencyRows(app: FastifyInstance, key: string) {
  return app.database.db.selectFrom('idempotency_records').selectAll().where('idempotency_key', '=', key).execute();
}

/** Every audit event of a workspace, newest first. */
export function auditEvents(app: FastifyInstance, workspaceId: string): Promise<AuditEventView[]> {
  return app.services.audit.list(workspaceId, 100_000);
}

/**
 * Makes every INSERT into `table` fail inside the database (a real database error, not a mock), on SQLite
 * or PostgreSQL. Returns the function that removes the failure again.
 */
export async function failInserts(db: Kysely<Database>, table: 'leads' | 'audit_events' | 'idempotency_records'): Promise<() => Promise<void>> {
  const name = sql.raw(`guarantees_fail_${table}`);
  if (isPostgres(db)) {
    await sql`create or replace function guarantees_fail() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(db);
    await sql`create trigger ${name} before insert on ${sql.table(table)} for each row execute function guarantees_fail()`.execute(db);
    return async () => {
      await sql`drop trigger ${name} on ${sql.table(table)}`.execute(db);
    };
  }
  await sql`create trigger ${name} before insert on ${sql.table(table)} begin select raise(abort, 'injected failure'); end`.execute(db);
  return async () => {
    await sql`drop trigger ${name}`.execute(db);
  };
}
