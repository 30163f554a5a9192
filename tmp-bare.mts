import Fastify from 'fastify';
import pino from 'pino';
const mode = process.argv[2];
const logger = mode.includes('log') ? pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true })) : undefined;
const app = Fastify(logger ? { loggerInstance: logger } : {});
if (mode.includes('hooks')) {
  app.addHook('onRequest', async (req, reply) => { reply.header('Request-Id', req.id); });
  app.addHook('onRequest', async () => {});
  app.addHook('onRequest', async () => {});
  app.addHook('preHandler', async () => {});
  app.addHook('onSend', async (_r, _re, p) => p);
  app.addHook('onResponse', async () => {});
}
app.get('/bare', async () => ({ object: 'ping', ok: true }));
await app.listen({ port: Number(process.argv[3]) });
