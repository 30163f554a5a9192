import type { CompiledQuery, Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database, Db } from './schema.js';
import { sqliteConnectionsOf } from './sqlite.js';

const PLACEHOLDER = '\u0000arg';

/**
 * A query built and compiled once per dialect, then run with new arguments: for the few queries on every
 * request's path (key lookup, read by id), where building and compiling with Kysely costs more than
 * running the statement. `build` receives placeholder strings for its arguments; they must appear as
 * plain parameters of the query. Outside a transaction on an SQLite file, the statement runs at once on the
 * reader connection, without Kysely's executor (the asynchronous connection hand-off costs more than the read).
 */
export function precompiled<Args extends string[], Row>(build: (db: Kysely<Database>, ...args: Args) => { compile(): CompiledQuery<Row> }) {
  const cache = new Map<boolean, { query: CompiledQuery<Row>; slots: number[] }>();
  return async (db: Db, ...args: Args): Promise<Row | undefined> => {
    const postgres = isPostgres(db);
    let entry = cache.get(postgres);
    if (!entry) {
      const placeholders = args.map((_, i) => `${PLACEHOLDER}${i}`) as Args;
      const query = build(db as Kysely<Database>, ...placeholders).compile();
      const slots = query.parameters.map((p) => (typeof p === 'string' && p.startsWith(PLACEHOLDER) ? Number(p.slice(PLACEHOLDER.length)) : -1));
      entry = { query, slots };
      cache.set(postgres, entry);
    }
    const { query, slots } = entry;
    const parameters = query.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    const rows = sqliteConnectionsOf(db)?.readNow(query.sql, parameters);
    if (rows) return rows[0] as Row | undefined;
    const result = await db.executeQuery<Row>({ ...query, parameters });
    return result.rows[0];
  };
}
