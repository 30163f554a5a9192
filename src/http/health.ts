import type { FastifyInstance } from 'fastify';

/**
 * /healthz: the process is up. /readyz: it can serve — the database answers and, with REDIS_URL, Redis
 * too (when Redis is down under a `local` or `open` policy the service still serves and says so).
 */
export function registerHealth(app: FastifyInstance): void {
  app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    const checks: Record<string, string> = {};
    let ready = true;
    try {
      await app.database.ping();
      checks.database = 'ok';
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
