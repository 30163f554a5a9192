import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../../src/db/dialect.js';
import type { Database } from '../../src/db/schema.js';
import type { AuditEventView } from '../../src/modules/audit/service.js';
import { expect } from 'vitest';
import type { Tenant, TestApp } from '../helpers/app.js';

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

let counter = 0;
/** An Idempotency-Key no other test of the run uses. */
export const uniqueKey = (label = 'k') => `${label}-${process.pid}-${Date.now()}-${++counter}`;

/** How many items the first page (up to 100) of a list of the tenant's holds. */
export async function listCount(tenant: Tenant, url: string): Promise<number> {
  const response = await tenant.request('GET', `${url}?limit=100`);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { data: unknown[] }).data.length;
}

/** Runs SQL through a connection of its own, as an operator's tool on the same database would. */
export async function writeElsewhere(t: TestApp, statement: string): Promise<void> {
  const { database } = t.config;
  if (database.kind === 'sqlite') {
    const other = new SQLite(database.path);
    try {
      other.prepare(statement).run();
    } finally {
      other.close();
    }
    // The service sees another process's commit from the next turn of its event loop (src/db/sqlite.ts).
    await new Promise((resolve) => setImmediate(resolve));
    return;
  }
  await sql.raw(statement).execute(t.app.database.db);
}
