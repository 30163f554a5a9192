/** Every scope an API key can carry, as the specification names them. */
export const SCOPES = [
  'analytics:read',
  'chatbots:read',
  'chatbots:write',
  'conversations:read',
  'events:read',
  'messages:write',
  'leads:read',
  'leads:write',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/** True when the string names a known scope. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
