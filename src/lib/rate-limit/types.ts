/** One budget a request spends from: N requests per rolling window, refilling continuously. */
export interface Budget {
  /** Policy name as shown in the headers: "key" or "workspace". */
  policy: string;
  /** What the budget belongs to (an API key id, a workspace id). */
  id: string;
  limit: number;
  windowMs: number;
  /** The in-memory store's key for this budget, set by the store on first use. */
  key?: string;
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
 * Where budgets live: in process by default, a shared store when several instances run. `consume` checks
 * every budget and spends from all of them or from none, atomically.
 */
export interface RateLimitStore {
  consume(budgets: Budget[], nowMs: number): Promise<RateDecision>;
  /** The same decision made synchronously, by stores that keep budgets in this process's memory. */
  consumeNow?(budgets: Budget[], nowMs: number): RateDecision;
}
