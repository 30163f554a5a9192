import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from './errors.js';

/** The deepest nesting of arrays and objects a request body may have; no operation takes more than a few. */
export const MAX_JSON_DEPTH = 32;

/** Body limit of routes that take only a few short fields (sign-in, sign-up, invitations, widget forms). */
export const SMALL_BODY_LIMIT_BYTES = 16 * 1024;

// One pass over the text, before JSON.parse builds anything: brackets outside strings, and how deep.
function nestedTooDeep(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string: to its closing quote, stepping over escapes.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/**
 * Request bodies are JSON only (`application/json`, or `application/merge-patch+json` for PATCH): every
 * other media type gets 415. Bodies nested deeper than MAX_JSON_DEPTH are refused from a scan of the text, before
 * parsing; parsing refuses prototype-poisoning keys with a message that says so.
 */
export function installJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(new AppError('invalid_request', 'The body is empty but Content-Type says JSON: send a JSON object.'), undefined);
      return;
    }
    if (nestedTooDeep(text, MAX_JSON_DEPTH)) {
      done(new AppError('invalid_request', `The body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`), undefined);
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
