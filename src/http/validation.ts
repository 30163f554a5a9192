import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ useDefaults: true, removeAdditional: false, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

// Bodies are validated strictly: no type coercion ("1" is not a number), unknown fields are errors
// (not silently stripped, Fastify's default) and every problem is reported at once.
const bodyAjv = makeAjv({ coerceTypes: false, allErrors: true });
// Query strings and path parameters arrive as text, so those are coerced ("20" → 20).
const parameterAjv = makeAjv({ coerceTypes: 'array', allErrors: true });

/** Fastify validator compiler: strict for bodies, coercing for query strings, params and headers. */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : parameterAjv).compile(schema);

/** Turns Ajv errors into the API's field errors (JSON pointers for bodies, names for parameters). */
export function toFieldErrors(errors: ErrorObject[], context: string | undefined): FieldError[] {
  const inBody = context === undefined || context === 'body';
  const seen = new Set<string>();
  const out: FieldError[] = [];
  // A nullable field (`anyOf: [T, null]`) that gets a bad value fails every branch: report the failure
  // of the real type only, not "must be null" and "must match a schema in anyOf" beside it.
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const relevant = errors.filter(
    (e) => !unionPaths.has(e.instancePath) || (e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null')),
  );
  for (const error of relevant.length > 0 ? relevant : errors) {
    let path = error.instancePath;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'additionalProperties') {
      path = `${path}/${String(error.params.additionalProperty)}`;
      message = 'unknown field';
    } else if (error.keyword === 'required') {
      path = `${path}/${String(error.params.missingProperty)}`;
      message = 'is required';
    } else if (error.keyword === 'enum') {
      message = `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    }
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(inBody ? { pointer: path, message } : { parameter: path.replace(/^\//, '').replace(/\//g, '.') || context || '', message });
  }
  return out;
}
