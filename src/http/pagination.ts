import { hash } from 'node:crypto';
import { AppError } from './errors.js';

/** A position in a keyset ordered by (created_at, id). */
export interface Keyset {
  createdAt: string;
  id: string;
}

/** What a repository needs to fetch one page. */
export interface PageRequest {
  limit: number;
  after: Keyset | null;
  order: 'asc' | 'desc';
}

/** One page as the API presents it. */
export interface Page<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// The cursor binds the position to the filters it was issued with: a short digest over both, so an
// edited cursor or one replayed with other filters is refused (400) instead of silently misbehaving.
function fingerprint(position: Keyset, filters: Record<string, unknown>): string {
  const canonical = JSON.stringify([position.createdAt, position.id, canonicalFilters(filters)]);
  return hash('sha256', canonical, 'base64url').slice(0, 16);
}

function canonicalFilters(filters: Record<string, unknown>): [string, unknown][] {
  return Object.keys(filters)
    .filter((key) => filters[key] !== undefined && filters[key] !== null)
    .sort()
    .map((key) => [key, filters[key]]);
}

/** Encodes the position after the last item of a page, bound to the page's filters. */
export function encodeCursor(position: Keyset, filters: Record<string, unknown>): string {
  const payload = [position.createdAt, position.id, fingerprint(position, filters)];
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

function invalid(): AppError {
  return new AppError('invalid_cursor', 'The cursor is malformed or was issued for different filters; start again without it.', {
    errors: [{ parameter: 'cursor', message: 'invalid cursor' }],
  });
}

/** Decodes a cursor; 400 `invalid_cursor` when it is malformed, tampered with, or from other filters. */
export function decodeCursor(cursor: string, filters: Record<string, unknown>): Keyset {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalid();
  const [createdAt, id, digest] = parsed as unknown[];
  if (typeof createdAt !== 'string' || !TIMESTAMP.test(createdAt)) throw invalid();
  if (typeof id !== 'string' || id.length > 64 || typeof digest !== 'string') throw invalid();
  const position = { createdAt, id };
  if (digest !== fingerprint(position, filters)) throw invalid();
  return position;
}

/** Turns the query's `limit`/`cursor` into a page request, validating the cursor against the filters. */
export function pageRequest(
  query: { limit?: number; cursor?: string },
  filters: Record<string, unknown>,
  order: 'asc' | 'desc' = 'desc',
): PageRequest {
  return {
    limit: query.limit ?? 20,
    after: query.cursor ? decodeCursor(query.cursor, { ...filters, order }) : null,
    order,
  };
}

/**
 * Builds the page from rows fetched with `limit + 1` (the extra row only tells whether more exist),
 * presenting each item and issuing the cursor for the next page. A feed (`resumable`: the events) issues
 * it after its last item even on the last page, so a reader can come back for what is added later; it
 * is null only when the page is empty (the reader keeps the cursor it has).
 */
export function toPage<Row extends { created_at: string; id: string }, T>(
  rows: Row[],
  request: PageRequest,
  filters: Record<string, unknown>,
  present: (row: Row) => T,
  options: { resumable?: boolean } = {},
): Page<T> {
  const hasMore = rows.length > request.limit;
  const items = hasMore ? rows.slice(0, request.limit) : rows;
  const last = items[items.length - 1];
  return {
    object: 'list',
    data: items.map(present),
    has_more: hasMore,
    next_cursor:
      (hasMore || options.resumable) && last ? encodeCursor({ createdAt: last.created_at, id: last.id }, { ...filters, order: request.order }) : null,
  };
}
