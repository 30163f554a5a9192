import { Redis } from 'ioredis';
import type { Budget, BudgetState, RateDecision, RateLimitStore } from './types.js';

// GCRA over every budget in one Lua script: Redis runs it atomically, so instances sharing the Redis
// share the budgets, and a refusal by one budget spends from none. "Now" is the instance's clock, as with
// the in-process store (instances are expected to run NTP; a skew of a few ms shifts a wait by as much).
// KEYS: one per budget. ARGV: now_ms, then interval_ms, window_ms for each budget, in order.
// Returns: { allowed (0/1), retry_ms, then remaining, until_next_ms for each budget }.
const SCRIPT = `
local now = tonumber(ARGV[1])
local n = #KEYS
local tats, nexts = {}, {}
local allowed, retry = 1, 0
for i = 1, n do
  local interval = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local tat = tonumber(redis.call('GET', KEYS[i]) or now)
  if tat < now then tat = now end
  tats[i] = tat
  nexts[i] = tat + interval
  local allow_at = nexts[i] - window
  if allow_at > now then
    allowed = 0
    if allow_at - now > retry then retry = allow_at - now end
  end
end
local out = { allowed, tostring(retry) }
for i = 1, n do
  local interval = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local tat = tats[i]
  if allowed == 1 then
    tat = nexts[i]
    redis.call('SET', KEYS[i], tostring(tat), 'PX', math.ceil(tat - now) + 1000)
  end
  local remaining = math.floor((window - (tat - now)) / interval + 1e-9)
  if remaining < 0 then remaining = 0 end
  local until_next = tat + interval - window - now
  if until_next < 0 then until_next = 0 end
  table.insert(out, remaining)
  table.insert(out, tostring(until_next))
end
return out
`;

interface GcraCommand {
  rateLimitGcra(numberOfKeys: number, ...keysThenArgs: string[]): Promise<unknown[]>;
}

/** How the service behaves when Redis cannot be reached. */
export type RedisFailurePolicy = 'local' | 'open' | 'closed';

/** Raised when the shared store is unreachable and the policy is `closed`. */
export class RateLimitStoreUnavailable extends Error {
  override name = 'RateLimitStoreUnavailable';
}

/** Budgets in Redis, shared by every instance. */
export class RedisRateLimitStore implements RateLimitStore {
  readonly redis: Redis;

  constructor(
    url: string,
    private readonly onFailure: RedisFailurePolicy,
    private readonly fallback: RateLimitStore,
    private readonly log: (error: unknown) => void = () => undefined,
  ) {
    // Fail fast while disconnected (no offline queue) and keep reconnecting in the background, so the
    // service recovers by itself when Redis is back.
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 1000,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(100 * times, 2000),
      lazyConnect: false,
    });
    this.redis.on('error', () => undefined);
    // defineCommand sends the script once and then calls it by its SHA (EVALSHA).
    this.redis.defineCommand('rateLimitGcra', { lua: SCRIPT });
  }

  async consume(budgets: Budget[], nowMs: number): Promise<RateDecision> {
    let reply: unknown[];
    try {
      reply = await (this.redis as unknown as GcraCommand).rateLimitGcra(
        budgets.length,
        ...budgets.map((b) => `ratelimit:${b.policy}:${b.id}`),
        String(nowMs),
        ...budgets.flatMap((b) => [String(b.windowMs / b.limit), String(b.windowMs)]),
      );
    } catch (error) {
      this.log(error);
      if (this.onFailure === 'closed') throw new RateLimitStoreUnavailable('the rate-limit store (Redis) is unreachable');
      if (this.onFailure === 'open') return unlimited(budgets);
      return this.fallback.consume(budgets, nowMs);
    }
    const allowed = Number(reply[0]) === 1;
    const states: BudgetState[] = budgets.map((b, i) => {
      const remaining = Number(reply[2 + 2 * i]);
      const untilNext = Number(reply[3 + 2 * i]);
      return { policy: b.policy, limit: b.limit, windowSeconds: Math.round(b.windowMs / 1000), remaining, resetSeconds: remaining > 0 ? 0 : Math.ceil(untilNext / 1000) };
    });
    const retryAfterMs = Number(reply[1]);
    // Nothing is spent on a refusal, so the budgets left with nothing are exactly the ones that refused.
    const violated = allowed ? [] : budgets.filter((_b, i) => states[i]!.remaining === 0).map((b) => b.policy);
    return { allowed, budgets: states, violated, retryAfterMs };
  }

  /** Waits (up to `timeoutMs`) for the first connection; returns whether Redis is connected. */
  async waitUntilReady(timeoutMs = 2000): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.redis.once('ready', onReady);
    });
  }

  /** True when Redis answers. */
  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

function unlimited(budgets: Budget[]): RateDecision {
  return {
    allowed: true,
    budgets: budgets.map((b) => ({ policy: b.policy, limit: b.limit, windowSeconds: Math.round(b.windowMs / 1000), remaining: b.limit, resetSeconds: 0 })),
    violated: [],
    retryAfterMs: 0,
  };
}
