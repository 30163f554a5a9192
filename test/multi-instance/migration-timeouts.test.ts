import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { prepareDatabase } from '../../src/db/database.js';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';

// An instance starting while another one migrates waits for the migration lock (Kysely's advisory lock),
// however long the request statement timeout is: migrations are not requests. PostgreSQL + Redis tier only.

/** The advisory lock Kysely's PostgreSQL adapter takes around migrations. */
const MIGRATION_LOCK_ID = '3853314791062309107';

describe('migrations and the request statement timeout', () => {
  let env: Record<string, string>;
  let other: pg.Client;

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL) throw new Error('the multi-instance suite needs TEST_DATABASE_URL');
    env = freshDatabaseEnv();
    other = new pg.Client({ connectionString: env.DATABASE_URL });
    await other.connect();
  });

  afterAll(async () => {
    await other?.end();
    await dropDatabase(env);
  });

  it('waits for another instance\'s migration lock longer than DATABASE_STATEMENT_TIMEOUT_MS, then migrates', async () => {
    const config = loadConfig({ ...env, LOG_LEVEL: 'silent', DATABASE_STATEMENT_TIMEOUT_MS: '100' });
    await other.query(`select pg_advisory_lock(${MIGRATION_LOCK_ID})`);
    const released = new Promise<void>((resolve, reject) => {
      setTimeout(() => other.query(`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`).then(() => resolve(), reject), 1_000);
    });
    const { handle, applied } = await prepareDatabase(config.database);
    await released;
    try {
      expect(applied.length).toBeGreaterThan(10);
      // The pool the requests use keeps its own timeout.
      const { rows } = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(handle.db);
      expect(rows[0]!.statement_timeout).toBe('100ms');
    } finally {
      await handle.close();
    }
  });
});
