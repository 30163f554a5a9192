import type { FastifyInstance } from 'fastify';

/** How long /readyz waits for the database: it answers within 2 s even when the database hangs. */
const PROBE_TIMEOUT_MS = 1000;

/** Runs `work`, or rejects once `ms` have passed (the work itself is bounded elsewhere: query_timeout). */
async function withDeadline<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * /healthz: the process is up. /readyz: it can serve — the database answers (within 1 s) and has room for
 * writes, and, with REDIS_URL, Redis too (when Redis is down under a `local` or `open` policy the service
 * still serves and says so).
 */
export function registerHealth(app: FastifyInstance): void {
  app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    const checks: Record<string, string> = {};
    let ready = true;
    try {
      // Within its own deadline: a database that stops answering must not stall the probe.
      const storageFull = await withDeadline(PROBE_TIMEOUT_MS, async () => {
        await app.database.ping();
        return app.database.storageFull();
      });
      checks.database = storageFull ? 'storage_full' : 'ok';
      ready = !storageFull;
    } catch (error) {
      request.log.warn({ err: error }, 'readiness: database unreachable');
      checks.database = 'unreachable';
      ready = false;
    }
    if (app.redis) {
      const up = await app.redis.ping();
      checks.redis = up ? 'ok' : 'unreachable';
      if (!up && app.config.redis?.onFailure === 'closed') ready = false;
    }
    const degraded = Object.values(checks).some((v) => v !== 'ok');
    if (!ready) reply.code(503).header('Retry-After', '5');
    return { status: ready ? (degraded ? 'degraded' : 'ready') : 'unavailable', checks };
  });
}
