import type { Budget, BudgetState, RateDecision } from './types.js';

/**
 * GCRA (generic cell rate algorithm) over several budgets at once. Each budget keeps one number, its
 * theoretical arrival time (TAT). A request costs `window / limit`; it is allowed while the TAT stays within
 * one window of now. All budgets are checked first, and new TATs are returned only when all allow it, so a
 * refusal spends nothing anywhere. Waits are exact, which makes Retry-After honest.
 */
export function decide(budgets: Budget[], stored: (number | undefined)[], nowMs: number): { decision: RateDecision; next: number[] | null } {
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
    if (allowAt > nowMs) {
      violated.push(budget.policy);
      retryAfterMs = Math.max(retryAfterMs, allowAt - nowMs);
    }
    next[i] = candidate;
  }
  const allowed = violated.length === 0;
  const states: BudgetState[] = new Array<BudgetState>(count);
  for (let i = 0; i < count; i++) {
    const budget = budgets[i]!;
    const interval = budget.windowMs / budget.limit;
    const tat = allowed ? next[i]! : Math.max(stored[i] ?? nowMs, nowMs);
    const remaining = Math.max(0, Math.floor((budget.windowMs - (tat - nowMs)) / interval + 1e-9));
    const untilNext = Math.max(0, tat + interval - budget.windowMs - nowMs);
    states[i] = {
      policy: budget.policy,
      limit: budget.limit,
      windowSeconds: Math.round(budget.windowMs / 1000),
      remaining,
      resetSeconds: remaining > 0 ? 0 : Math.ceil(untilNext / 1000),
    };
  }
  return { decision: { allowed, budgets: states, violated, retryAfterMs }, next: allowed ? next : null };
}
