import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { dropDatabase } from '../test/helpers/database.js';

/** The database a benchmark runs on. */
export type Backend = 'sqlite' | 'postgres';

/** Where the PostgreSQL benchmarks run (each in fresh schemas) and their Redis. */
export const BENCH_PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A fresh, empty database as environment variables for loadConfig or a child process: a SQLite file in a
 * temp folder, or a schema of its own on BENCH_DATABASE_URL (with Redis for the rate-limit budgets, as the
 * PostgreSQL shape runs). Remove it with `dropBenchDatabase`.
 */
export function benchDatabaseEnv(backend: Backend, name: string, options: { redis?: boolean } = {}): Record<string, string> {
  if (backend === 'postgres') {
    // SECRET_KEY: PostgreSQL needs one to store webhook secrets (SQLite generates secret.key beside its file).
    return { DATABASE_URL: BENCH_PG_URL, DATABASE_SCHEMA: `bench_${name}_${process.pid}`, SECRET_KEY: randomBytes(32).toString('base64'), ...(options.redis === false ? {} : { REDIS_URL: BENCH_REDIS_URL }) };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`));
  return { DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}` };
}

/** Drops the schema, or deletes the SQLite folder, of a `benchDatabaseEnv` database. */
export const dropBenchDatabase: (env: Record<string, string>) => Promise<void> = dropDatabase;

/**
 * On PostgreSQL a bulk load is vacuumed and analyzed before anything is measured, as autovacuum would do
 * in a steady state: otherwise it wakes up on the freshly loaded tables in the middle of the run and takes
 * CPU from what is measured (an earlier PostgreSQL run measured the bare server at a third of its SQLite-run
 * figure). SQLite needs nothing: closing the loading connection checkpoints its WAL.
 */
export async function settle(env: Record<string, string>): Promise<void> {
  if (!env.DATABASE_SCHEMA) return;
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('select tablename as name from pg_tables where schemaname = $1', [env.DATABASE_SCHEMA]);
    for (const { name } of rows) await client.query(`vacuum (analyze) "${env.DATABASE_SCHEMA}"."${name}"`);
  } finally {
    await client.end();
  }
}
