/** The source of "now". Injected so tests can move time (idempotency windows, expiry, rate limits). */
export interface Clock {
  /** The wall clock: timestamps that are stored or shown. It may be stepped (NTP, an operator) either way. */
  now(): Date;
  /**
   * Milliseconds on a clock that only moves forward at a steady rate, from an arbitrary origin: for measuring
   * durations (rate-limit budgets, circuit breakers), which a stepped wall clock would stretch or reverse.
   */
  monotonicMs(): number;
}

/** The wall clock, and performance.now() as the monotonic one. */
export const systemClock: Clock = { now: () => new Date(), monotonicMs: () => performance.now() };
