import type { CompiledQuery, Insertable, Kysely, QueryResult } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database, Db } from './schema.js';

const PLACEHOLDER = '\u0000arg';

/** Something Kysely can compile: a query builder. */
interface Compilable<Row> {
  compile(): CompiledQuery<Row>;
}

interface Compiled<Row> {
  query: CompiledQuery<Row>;
  /** For each parameter of the query: the index of the argument that fills it, or -1 for a constant. */
  slots: number[];
}

/**
 * Builds and compiles a query once per dialect, with placeholder strings for its arguments; `run` then
 * substitutes each call's arguments. The arguments must appear as plain parameters of the query.
 */
function compileOnce<Args extends unknown[], Row>(build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>) {
  const cache = new Map<boolean, Compiled<Row>>();
  return (db: Db, args: Args): CompiledQuery<Row> => {
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
    return { ...query, parameters: query.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p)) };
  };
}

/**
 * A read built and compiled once per dialect, then run with new arguments: for the few queries on every
 * request's path (key lookup, read by id), where building and compiling with Kysely costs more than
 * running the statement. Returns the first row.
 */
export function precompiled<Args extends string[], Row>(build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>) {
  const compiled = compileOnce(build);
  return async (db: Db, ...args: Args): Promise<Row | undefined> => (await db.executeQuery(compiled(db, args))).rows[0];
}

/**
 * A write built and compiled once per dialect, then run with new arguments on the given executor (usually a
 * transaction): for the statements of every write request (idempotency record, audit chain, counters).
 */
export function precompiledWrite<Args extends unknown[], Row = never>(build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>) {
  const compiled = compileOnce(build);
  return (db: Db, ...args: Args): Promise<QueryResult<Row>> => db.executeQuery(compiled(db, args));
}

/**
 * An insert of one whole row, built and compiled once per dialect and set of columns: the row's values
 * become the parameters in column order.
 */
export function precompiledInsert<T extends keyof Database & string>(table: T) {
  const cache = new Map<string, { run: (db: Db, args: unknown[]) => CompiledQuery<unknown> }>();
  return async (db: Db, row: Insertable<Database[T]>): Promise<void> => {
    const values = row as Record<string, unknown>;
    // As with Kysely's own inserts, a column whose value is undefined is left out.
    const columns = Object.keys(values).filter((column) => values[column] !== undefined);
    const key = columns.join(',');
    let entry = cache.get(key);
    if (!entry) {
      entry = {
        run: compileOnce((kysely, ...values: unknown[]) =>
          kysely.insertInto(table).values(Object.fromEntries(columns.map((column, i) => [column, values[i]])) as never),
        ),
      };
      cache.set(key, entry);
    }
    await db.executeQuery(entry.run(db, columns.map((column) => values[column])));
  };
}
