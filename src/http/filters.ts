import { parseInstant } from '../lib/time.js';
import { AppError } from './errors.js';

/** Normalises an instant from a query parameter to the stored form (ISO 8601 UTC, milliseconds). */
export function instant(value: string | undefined, parameter: string): string | undefined {
  if (value === undefined) return undefined;
  const parsed = parseInstant(value);
  if (!parsed) {
    throw AppError.validation(`The query parameter "${parameter}" is not a valid date-time.`, [
      { parameter, message: 'must be an ISO 8601 date-time' },
    ]);
  }
  return new Date(parsed.ms).toISOString();
}

/** The created_after / created_before pair every list accepts, normalised. */
export function createdRange(query: { created_after?: string; created_before?: string }) {
  return {
    createdAfter: instant(query.created_after, 'created_after'),
    createdBefore: instant(query.created_before, 'created_before'),
  };
}
