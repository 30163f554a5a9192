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
  event: 'ev',
  request: 'req',
  user: 'usr',
  invitation: 'inv',
  replyJob: 'rjob',
  source: 'src',
  document: 'doc',
  unansweredQuestion: 'unq',
  webhookEndpoint: 'whk',
  webhookDelivery: 'whmsg',
  webhookAttempt: 'whatt',
  mailJob: 'mail',
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

// The time part of the last millisecond an id was made in: ids made in the same millisecond share it.
let lastMs = -1;
let lastTime = '';

function timePart(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastTime = encodeTime(ms);
  }
  return lastTime;
}

// Random characters are drawn from the CSPRNG in blocks (one call per 512 ids instead of one per id), and
// each byte of a block is turned into its Crockford character in place: an id's random part is then one
// latin1 slice of the block (one flat string) instead of 16 string concatenations.
const POOL_SIZE = 8192;
const CROCKFORD_CODES = Buffer.from(CROCKFORD, 'latin1');
let pool = freshPool();
let offset = 0;

function freshPool(): Buffer {
  const bytes = randomBytes(POOL_SIZE);
  for (let i = 0; i < POOL_SIZE; i++) bytes[i] = CROCKFORD_CODES[bytes[i]! & 31]!;
  return bytes;
}

function encodeRandom(length: number): string {
  if (offset + length > POOL_SIZE) {
    pool = freshPool();
    offset = 0;
  }
  const out = pool.toString('latin1', offset, offset + length);
  offset += length;
  return out;
}

/** A new prefixed, time-sortable id (ULID body: 10 time characters + 16 random ones). */
export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${ID_PREFIXES[kind]}_${timePart(now)}${encodeRandom(16)}`;
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
