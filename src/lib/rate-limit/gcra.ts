import type { Budget, BudgetState, RateDecision } from './types.js';

/**
 * Float rounding of fractional costs (60000/7 ms) and fractional clocks (performance.now(), Redis's µs) can
 * leave a TAT a hair past an exact boundary, refusing the last request of a burst that fits exactly. A
 * microsecond either way is below anything a client can observe, so differences within it count as none.
 * The Redis script (redis-store.ts) uses the same slack.
 */
export const SLACK_MS = 0.001;

/** A duration with the float noise below a microsecond removed, so Retry-After is not one second too long. */
function settle(ms: number): number {
  // Dividing the whole number of µs by 1000 gives the double nearest the decimal (30000, not 30000.000000000004).
  return Math.round(ms * 1000) / 1000;
}

/**
 * GCRA (generic cell rate algorithm) over several budgets at once. Each budget keeps one number, its
 * theoretical arrival time (TAT). A request costs `window / limit`; it is allowed while the TAT stays within
 * one window of now. All budgets are checked first, and new TATs are returned only when all allow it, so a
 * refusal spends nothing anywhere. Waits are exact, which makes Retry-After honest. With `spend` false (a
 * peek) the decision is the same, no TATs are returned and the states are the budgets as they stand.
 */
export function decide(budgets: Budget[], stored: (number | undefined)[], nowMs: number, spend = true): { decision: RateDecision; next: number[] | null } {
  // Plain loops and no closures: this runs on every authenticated request.
  const count = budgets.length;
  const next: number[] = new Array<number>(count);
  const violated: string[] = [];
  let retryAfterMs = 0;
  for (let i = 0; i < count; i++) {
    const budget = budgets[i]!;
    const tat = Math.max(stored[i] ?? nowMs, nowMs);
    const candidate = tat + budget.windowMs / budget.limit;
    const allowAt = candidate - budget.windowMs;
    if (allowAt - nowMs > SLACK_MS) {
      violated.push(budget.policy);
      retryAfterMs = Math.max(retryAfterMs, settle(allowAt - nowMs));
    }
    next[i] = candidate;
  }
  const allowed = violated.length === 0;
  const spent = allowed && spend;
  const states: BudgetState[] = new Array<BudgetState>(count);
  for (let i = 0; i < count; i++) {
    const budget = budgets[i]!;
    const interval = budget.windowMs / budget.limit;
    const tat = spent ? next[i]! : Math.max(stored[i] ?? nowMs, nowMs);
    const remaining = Math.max(0, Math.floor((budget.windowMs - (tat - nowMs) + SLACK_MS) / interval));
    const untilNext = Math.max(0, settle(tat + interval - budget.windowMs - nowMs));
    states[i] = {
      policy: budget.policy,
      limit: budget.limit,
      windowSeconds: Math.round(budget.windowMs / 1000),
      remaining,
      resetSeconds: remaining > 0 ? 0 : Math.ceil(untilNext / 1000),
    };
  }
  return { decision: { allowed, budgets: states, violated, retryAfterMs }, next: spent ? next : null };
}
