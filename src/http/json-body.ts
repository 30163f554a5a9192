import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from './errors.js';

/**
 * Request bodies are JSON only (`application/json`, or `application/merge-patch+json` for PATCH): every
 * other media type gets 415. Parsing refuses prototype-poisoning keys with a message that says so.
 */
export function installJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(new AppError('invalid_request', 'The body is empty but Content-Type says JSON: send a JSON object.'), undefined);
      return;
    }
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      const poisoned = error instanceof SyntaxError && /prototype/i.test(error.message);
      done(
        new AppError(
          'invalid_request',
          poisoned ? 'The body contains a forbidden key ("__proto__" or "constructor.prototype").' : 'The body is not valid JSON.',
        ),
        undefined,
      );
    }
  });
}
