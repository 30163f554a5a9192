import { Redis } from 'ioredis';
import { SLACK_MS } from './gcra.js';
import { monotonicMs } from './memory-store.js';
import type { Budget, BudgetState, RateDecision, RateLimitStore } from './types.js';

// GCRA over every budget in one Lua script: Redis runs it atomically, so instances sharing the Redis
// share the budgets, and a refusal by one budget spends from none. "Now" is Redis's own clock (TIME), never
// an instance's: an instance whose clock runs ahead would otherwise push TATs into everyone else's future
// and lock the key out on every instance. (replicate_commands lets Redis < 5 write after reading TIME; it
// is a no-op from Redis 5 on.) The arithmetic is gcra.ts's, with the same microsecond of slack (SLACK_MS).
// KEYS: one per budget. ARGV: spend (1, or 0 to peek), then interval_ms, window_ms for each budget, in order.
// Returns: { allowed (0/1), retry_ms, then remaining, until_next_ms, refused (0/1) for each budget }.
const SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local spend = ARGV[1] == '1'
local slack = ${SLACK_MS}
local function settle(ms) return math.floor(ms * 1000 + 0.5) / 1000 end
-- tostring keeps 14 digits: a TAT of ~1.7e12 ms would lose everything below 0.1 ms on every write.
local function exact(x) return string.format('%.17g', x) end
local n = #KEYS
local tats, nexts, refused = {}, {}, {}
local allowed, retry = 1, 0
for i = 1, n do
  local interval = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local tat = tonumber(redis.call('GET', KEYS[i]) or now)
  if tat < now then tat = now end
  tats[i] = tat
  nexts[i] = tat + interval
  local allow_at = nexts[i] - window
  refused[i] = 0
  if allow_at - now > slack then
    allowed = 0
    refused[i] = 1
    if settle(allow_at - now) > retry then retry = settle(allow_at - now) end
  end
end
local out = { allowed, exact(retry) }
for i = 1, n do
  local interval = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local tat = tats[i]
  if allowed == 1 and spend then
    tat = nexts[i]
    redis.call('SET', KEYS[i], exact(tat), 'PX', math.ceil(tat - now) + 1000)
  end
  local remaining = math.floor((window - (tat - now) + slack) / interval)
  if remaining < 0 then remaining = 0 end
  local until_next = settle(tat + interval - window - now)
  if until_next < 0 then until_next = 0 end
  table.insert(out, remaining)
  table.insert(out, exact(until_next))
  table.insert(out, refused[i])
end
return out
`;

// The script answers in well under a millisecond on a healthy Redis; 300 ms is far above any healthy round
// trip (another zone, a GC pause) and bounds what the one request that finds Redis stalled waits. With the
// breaker below, only that request (and one probe per OPEN_MS) ever waits this long.
const COMMAND_TIMEOUT_MS = 300;

// After a failure, requests apply the failure policy at once for this long instead of each waiting out the
// timeout; then one request probes Redis. Short, so that recovery is noticed within a couple of seconds;
// long enough that a stalled Redis costs one timeout per period instead of one per request.
const OPEN_MS = 2_000;

interface GcraCommand {
  rateLimitGcra(numberOfKeys: number, ...keysThenArgs: string[]): Promise<unknown[]>;
}

/** How the service behaves when Redis cannot be reached. */
export type RedisFailurePolicy = 'local' | 'open' | 'closed';

/** Raised when the shared store is unreachable and the policy is `closed`. */
export class RateLimitStoreUnavailable extends Error {
  override name = 'RateLimitStoreUnavailable';
}

/** Where the store reports the breaker opening (warn) and closing (info): a pino logger fits. */
export interface RateLimitStoreLog {
  warn(details: object, message: string): void;
  info(message: string): void;
}

/** Optional parts of a RedisRateLimitStore. */
export interface RedisStoreOptions {
  log?: RateLimitStoreLog;
  /** The breaker's time source (monotonic; tests pass their clock's). Budgets use Redis's own clock. */
  now?: () => number;
}

/**
 * Budgets in Redis, shared by every instance, behind a circuit breaker: when a command fails or times out,
 * the breaker opens and requests follow the failure policy at once (no Redis traffic) for OPEN_MS; then
 * the next request probes Redis (half-open: other requests keep following the policy until it answers),
 * and the breaker closes when Redis answers again, or stays open for another OPEN_MS.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly redis: Redis;
  private breaker: 'closed' | 'open' | 'half-open' = 'closed';
  /** When an open breaker lets the next probe through (on `now`). */
  private probeAt = 0;
  private readonly log: RateLimitStoreLog | undefined;
  private readonly now: () => number;

  constructor(
    url: string,
    private readonly onFailure: RedisFailurePolicy,
    private readonly fallback: RateLimitStore,
    options: RedisStoreOptions = {},
  ) {
    this.log = options.log;
    this.now = options.now ?? monotonicMs;
    // Fail fast while disconnected (no offline queue) and keep reconnecting in the background, so the
    // service recovers by itself when Redis is back.
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(100 * times, 2000),
      lazyConnect: false,
    });
    this.redis.on('error', () => undefined);
    // defineCommand sends the script once and then calls it by its SHA (EVALSHA).
    this.redis.defineCommand('rateLimitGcra', { lua: SCRIPT });
  }

  async consume(budgets: Budget[]): Promise<RateDecision> {
    return this.decide(budgets, true);
  }

  async peek(budgets: Budget[]): Promise<RateDecision> {
    return this.decide(budgets, false);
  }

  private async decide(budgets: Budget[], spend: boolean): Promise<RateDecision> {
    if (this.breaker !== 'closed') {
      if (this.breaker === 'half-open' || this.now() < this.probeAt) return this.degrade(budgets, spend);
      this.breaker = 'half-open'; // this request is the probe
    }
    let reply: unknown[];
    try {
      reply = await (this.redis as unknown as GcraCommand).rateLimitGcra(
        budgets.length,
        ...budgets.map((b) => `ratelimit:${b.policy}:${b.id}`),
        spend ? '1' : '0',
        ...budgets.flatMap((b) => [String(b.windowMs / b.limit), String(b.windowMs)]),
      );
    } catch (error) {
      this.open(error);
      return this.degrade(budgets, spend);
    }
    if (this.breaker !== 'closed') {
      this.breaker = 'closed';
      this.log?.info('rate-limit store (Redis) answers again: budgets are shared again');
    }
    return fromReply(budgets, reply);
  }

  private open(error: unknown): void {
    // Logged on the transition only: requests meanwhile do not repeat it, a failed probe stays quiet.
    if (this.breaker === 'closed') {
      this.log?.warn({ err: error }, `rate-limit store (Redis) failed: following the "${this.onFailure}" policy, probing Redis every ${OPEN_MS} ms`);
    }
    this.breaker = 'open';
    this.probeAt = this.now() + OPEN_MS;
  }

  private degrade(budgets: Budget[], spend: boolean): Promise<RateDecision> {
    if (this.onFailure === 'closed') return Promise.reject(new RateLimitStoreUnavailable('the rate-limit store (Redis) is unreachable'));
    if (this.onFailure === 'open') return Promise.resolve(unlimited(budgets));
    return spend ? this.fallback.consume(budgets) : this.fallback.peek(budgets);
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

  /** Drops the connection (and stops reconnecting). */
  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

function fromReply(budgets: Budget[], reply: unknown[]): RateDecision {
  const states: BudgetState[] = new Array<BudgetState>(budgets.length);
  const violated: string[] = [];
  for (let i = 0; i < budgets.length; i++) {
    const b = budgets[i]!;
    const remaining = Number(reply[2 + 3 * i]);
    const untilNext = Number(reply[3 + 3 * i]);
    if (Number(reply[4 + 3 * i]) === 1) violated.push(b.policy);
    states[i] = { policy: b.policy, limit: b.limit, windowSeconds: Math.round(b.windowMs / 1000), remaining, resetSeconds: remaining > 0 ? 0 : Math.ceil(untilNext / 1000) };
  }
  return { allowed: Number(reply[0]) === 1, budgets: states, violated, retryAfterMs: Number(reply[1]) };
}

function unlimited(budgets: Budget[]): RateDecision {
  return {
    allowed: true,
    budgets: budgets.map((b) => ({ policy: b.policy, limit: b.limit, windowSeconds: Math.round(b.windowMs / 1000), remaining: b.limit, resetSeconds: 0 })),
    violated: [],
    retryAfterMs: 0,
  };
}
