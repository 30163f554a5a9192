import type { FastifyInstance } from 'fastify';
import fastJson from 'fast-json-stringify';
import { cachedJson } from '../db/read-cache.js';

type Json = Record<string, unknown>;

const SIMPLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array']);

function isNullSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as Json).type === 'null' && Object.keys(schema).length === 1;
}

/**
 * The response schema as the serializer sees it: a nullable field written `anyOf: [T, {type: "null"}]`
 * (TypeBox's `Union([T, Null()])`, kept that way in the OpenAPI document and for validation) becomes
 * `{...T, type: [T.type, "null"]}`. fast-json-stringify serializes a type list with `typeof` checks, while
 * for `anyOf` it runs a JSON-schema validator on every branch of every nullable field of every response
 * (formats included: a `date-time` regular expression per timestamp): 3–4 % of an authenticated read in
 * a profile of GET /chatbots/{id}.
 */
export function nullableAsTypeList(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableAsTypeList);
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Json;
  const anyOf = source.anyOf;
  if (Array.isArray(anyOf) && anyOf.length === 2 && Object.keys(source).every((k) => k === 'anyOf' || k === 'description')) {
    const [first, second] = anyOf as unknown[];
    const value = isNullSchema(second) ? first : isNullSchema(first) ? second : null;
    if (value && typeof value === 'object' && typeof (value as Json).type === 'string' && SIMPLE_TYPES.has((value as Json).type as string)) {
      const converted = nullableAsTypeList(value) as Json;
      return { ...converted, ...(source.description ? { description: source.description } : {}), type: [converted.type, 'null'] };
    }
  }
  const out: Json = {};
  for (const [key, child] of Object.entries(source)) out[key] = nullableAsTypeList(child);
  return out;
}

/**
 * Response serialization: fast-json-stringify on the route's response schema, nullable fields as type
 * lists; a value held by the read cache is sent as the JSON the cache keeps with it (src/db/read-cache.ts).
 */
export function installSerializer(app: FastifyInstance): void {
  app.setSerializerCompiler(({ schema }) => {
    const serialize = fastJson(nullableAsTypeList(schema) as Parameters<typeof fastJson>[0]);
    return (data: unknown) => cachedJson(data) ?? serialize(data);
  });
}
