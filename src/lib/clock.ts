/** The source of "now". Injected so tests can move time (idempotency windows, expiry). */
export interface Clock {
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds, the one timestamp format of the API and the database. */
export function isoNow(clock: Clock): string {
  return clock.now().toISOString();
}
