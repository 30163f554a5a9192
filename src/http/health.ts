import type { FastifyInstance } from 'fastify';

/** /healthz (the process is up) and /readyz (it can serve: the database answers). */
export function registerHealth(app: FastifyInstance): void {
  app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    try {
      await app.database.ping();
      return { status: 'ready', checks: { database: 'ok' } };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      return reply.code(503).send({ status: 'unavailable', checks: { database: 'unreachable' } });
    }
  });
}
