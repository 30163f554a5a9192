import fastJson from 'fast-json-stringify';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { Nullable, Timestamp } from '../../src/http/schemas.js';
import { nullableAsTypeList } from '../../src/http/serializer.js';
import { Chatbot } from '../../src/modules/chatbots/schema.js';
import { Lead } from '../../src/modules/leads/schema.js';

// The response serializer sees nullable fields as type lists (no validator run per field); the OpenAPI
// document and request validation keep the `anyOf` the schemas declare.
describe('response serializer', () => {
  const schema = Type.Object({
    published_at: Nullable(Timestamp),
    temperature: Nullable(Type.Number()),
    description: Nullable(Type.String({ description: 'Free text.' })),
    settings: Nullable(Type.Object({ enabled: Type.Boolean() })),
    either: Type.Union([Type.String(), Type.Number()]),
  });

  it('turns `anyOf: [T, null]` into `type: [T, "null"]` and leaves other unions and the source schema alone', () => {
    const converted = nullableAsTypeList(schema) as { properties: Record<string, Record<string, unknown>> };
    expect(converted.properties.published_at).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    expect(converted.properties.temperature).toEqual({ type: ['number', 'null'] });
    expect(converted.properties.description).toMatchObject({ type: ['string', 'null'], description: 'Free text.' });
    expect(converted.properties.settings).toMatchObject({ type: ['object', 'null'], required: ['enabled'] });
    expect(converted.properties.either!.anyOf).toHaveLength(2);
    expect((schema.properties.published_at as unknown as { anyOf: unknown[] }).anyOf).toHaveLength(2);
  });

  it('serializes values and nulls exactly as the declared schema does', () => {
    const declared = fastJson(schema as never);
    const converted = fastJson(nullableAsTypeList(schema) as never);
    const values = [
      { published_at: '2026-11-23T10:00:00.000Z', temperature: 0.5, description: 'a "quoted" text', settings: { enabled: true }, either: 'x' },
      { published_at: null, temperature: null, description: null, settings: null, either: 3 },
    ];
    for (const value of values) {
      expect(converted(value)).toBe(declared(value));
      expect(JSON.parse(converted(value))).toEqual(value);
    }
  });

  it('keeps every field of real resources (an AI Agent, a lead) through the converted schema', () => {
    for (const resource of [Chatbot, Lead]) {
      const declared = nullableAsTypeList(resource) as { properties: Record<string, unknown> };
      expect(Object.keys(declared.properties).sort()).toEqual(Object.keys(resource.properties).sort());
    }
  });
});
