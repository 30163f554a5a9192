/** One budget a request spends from: N requests per rolling window, refilling continuously. */
export interface Budget {
  /** Policy name as shown in headers and problems: "key", "workspace", "failed-auth", "ip", … */
  policy: string;
  /** What the budget belongs to (an API key id, a workspace id). */
  id: string;
  limit: number;
  windowMs: number;
}

/** The state of one budget after a decision. */
export interface BudgetState {
  policy: string;
  limit: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until at least one more request is allowed (0 when some remain). */
  resetSeconds: number;
}

/** The outcome of checking several budgets together. */
export interface RateDecision {
  allowed: boolean;
  budgets: BudgetState[];
  /** Policies that refused the request. */
  violated: string[];
  /** Milliseconds until the request would be allowed by every violated budget. */
  retryAfterMs: number;
}

/**
 * Where budgets live: in process by default, a shared store when several instances run. The store owns its
 * time source (a monotonic clock in process, Redis's own clock when shared), so a stepped or skewed wall
 * clock on an instance can neither lock a key out nor hand it a fresh budget.
 */
export interface RateLimitStore {
  /** Checks every budget and spends one from all of them or from none, atomically. */
  consume(budgets: Budget[]): Promise<RateDecision>;
  /**
   * The decision `consume` would make, spending nothing: refused with `retryAfterMs` when a budget is
   * exhausted; `budgets` report what is left as it stands (for a check before any other work).
   */
  peek(budgets: Budget[]): Promise<RateDecision>;
}
