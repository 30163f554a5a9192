import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { PageRequest } from '../http/pagination.js';

/**
 * The keyset condition for the page after `request.after` in (created_at, id) order: rows strictly after
 * the last one seen, so rows inserted between pages are never repeated and none is skipped.
 * The redundant bound on created_at lets the (workspace_id, created_at, id) index do the range scan.
 */
export function afterKeyset(request: PageRequest, table: string): RawBuilder<SqlBool> | null {
  if (!request.after) return null;
  const createdAt = sql.ref(`${table}.created_at`);
  const id = sql.ref(`${table}.id`);
  const { createdAt: at, id: lastId } = request.after;
  return request.order === 'desc'
    ? sql<SqlBool>`(${createdAt} <= ${at} and (${createdAt} < ${at} or ${id} < ${lastId}))`
    : sql<SqlBool>`(${createdAt} >= ${at} and (${createdAt} > ${at} or ${id} > ${lastId}))`;
}
