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
// (not silently stripped, Fastify's default) and every problem is reported at once. `verbose` gives an
// error its schema, so a rule (`AtLeastOneOf`) is reported with its own words.
const bodyAjv = makeAjv({ coerceTypes: false, allErrors: true, verbose: true });
// Query strings and path parameters arrive as text, so those are coerced ("20" → 20).
const parameterAjv = makeAjv({ coerceTypes: 'array', allErrors: true });

/** Fastify validator compiler: strict for bodies, coercing for query strings, params and headers. */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : parameterAjv).compile(schema);

/** The words of a rule written with `AtLeastOneOf` (src/http/schemas.ts), kept in the schema beside its `anyOf`. */
interface UnmetRule {
  fields: string[];
  detail: string;
  message: string;
}

/** The rules a body failed, and the errors that are not those rules' own branches. */
function splitRules(errors: ErrorObject[]): { rules: { path: string; rule: UnmetRule }[]; rest: ErrorObject[] } {
  const rules: { path: string; rule: UnmetRule; schemaPath: string }[] = [];
  for (const error of errors) {
    const rule = (error.parentSchema as { 'x-unmet'?: UnmetRule } | undefined)?.['x-unmet'];
    if (error.keyword === 'anyOf' && rule) rules.push({ path: error.instancePath, rule, schemaPath: error.schemaPath });
  }
  const rest = errors.filter((e) => !rules.some((r) => e.schemaPath === r.schemaPath || e.schemaPath.startsWith(`${r.schemaPath}/`)));
  return { rules, rest };
}

/** The detail of a validation problem: a rule's own words when it is all that failed. */
export function validationDetail(errors: ErrorObject[], fallback: string): string {
  const { rules, rest } = splitRules(errors);
  return rules.length === 1 && rest.length === 0 ? rules[0]!.rule.detail : fallback;
}

/** The most field errors a problem lists: enough to fix a form, too few to make a refusal expensive to send. */
export const MAX_FIELD_ERRORS = 10;

/** Turns Ajv errors into the API's field errors (JSON pointers for bodies, names for parameters). */
export function toFieldErrors(allErrors: ErrorObject[], context: string | undefined): FieldError[] {
  const inBody = context === undefined || context === 'body';
  const seen = new Set<string>();
  const out: FieldError[] = [];
  const { rules, rest: errors } = splitRules(allErrors);
  // A nullable field (`anyOf: [T, null]`) that gets a bad value fails every branch: report the failure
  // of the real type only, not "must be null" and "must match a schema in anyOf" beside it.
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const relevant = errors.filter(
    (e) => !unionPaths.has(e.instancePath) || (e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null')),
  );
  for (const error of relevant.length > 0 ? relevant : errors) {
    if (out.length === MAX_FIELD_ERRORS) break;
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
  for (const { path, rule } of rules) for (const field of rule.fields) out.push({ pointer: `${path}/${field}`, message: rule.message });
  return out.slice(0, MAX_FIELD_ERRORS);
}
