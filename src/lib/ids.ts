import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The prefixes of every kind of id the service issues. */
export const ID_PREFIXES = {
  workspace: 'ws',
  apiKey: 'key',
  chatbot: 'bot',
  conversation: 'conv',
  message: 'msg',
  lead: 'lead',
  visitor: 'vis',
  auditEvent: 'evt',
  request: 'req',
  user: 'usr',
  invitation: 'inv',
  replyJob: 'rjob',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

function encodeTime(ms: number): string {
  let out = '';
  let value = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

// Random bytes are drawn from the CSPRNG in blocks: one call per 512 ids instead of one per id.
const POOL_SIZE = 8192;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function encodeRandom(length: number): string {
  if (offset + length > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  let out = '';
  for (let i = offset; i < offset + length; i++) out += CROCKFORD[pool[i]! & 31];
  offset += length;
  return out;
}

/** A new prefixed, time-sortable id (ULID body: 10 time characters + 16 random ones). */
export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(now)}${encodeRandom(16)}`;
}

const ID_BODY = '[0-9A-HJKMNP-TV-Z]{26}';
const patterns = Object.fromEntries(
  Object.entries(ID_PREFIXES).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}_${ID_BODY}$`)]),
) as Record<IdKind, RegExp>;

/** True when `value` has the exact shape of an id of this kind (so malformed ids never reach SQL). */
export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && patterns[kind].test(value);
}

/** The JSON-schema pattern of an id of this kind, for request and response schemas. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_${ID_BODY}$`;
}
