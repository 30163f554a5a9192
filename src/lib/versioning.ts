import { hash } from 'node:crypto';

/** A strong ETag for one version of a resource: every change bumps `updated_at`, so (id, updated_at) names it. */
export function etagOf(id: string, updatedAt: string): string {
  return `"${hash('sha256', `${id}\u0000${updatedAt}`, 'base64url').slice(0, 27)}"`;
}

/** True when an If-Match header value (a list of ETags, or `*`) matches the current ETag. */
export function ifMatchSatisfied(header: string | undefined, current: string): boolean {
  if (header === undefined) return true;
  return header
    .split(',')
    .map((tag) => tag.trim())
    .some((tag) => tag === '*' || tag === current);
}

/**
 * True when an If-None-Match header value names the current ETag (RFC 9110 §13.1.2): `*`, or a list of
 * entity tags compared weakly (`W/"x"` matches `"x"`). A GET then answers 304.
 */
export function ifNoneMatchSatisfied(header: string | undefined, current: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = current.replace(/^W\//, '');
  for (const [tag] of header.matchAll(/(?:W\/)?"[^"]*"/g)) if (tag.replace(/^W\//, '') === opaque) return true;
  return false;
}

/**
 * The `updated_at` of a change: now, but always later than the previous version, so two updates within
 * one millisecond still get different ETags.
 */
export function nextUpdatedAt(previous: string, now: Date): string {
  const prior = Date.parse(previous);
  return new Date(Math.max(now.getTime(), prior + 1)).toISOString();
}
