import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { expectProblem, must, testClock } from './support.js';

// Keyset pagination: no item skipped or repeated while rows are inserted between pages, has_more /
// next_cursor / Link on the last page, cursors bound to their filters, and the limit's bounds.

const clock = testClock();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({}, { clock, replyWorker: false }); // exact fixtures: no agent answers appear in the background
});
afterAll(() => t.close());

type Page = { object: string; data: { id: string }[]; has_more: boolean; next_cursor: string | null };

async function page(tenant: Tenant, url: string): Promise<{ body: Page; link: string | undefined }> {
  const response = await tenant.request('GET', url);
  expect(response.statusCode, response.body).toBe(200);
  const link = response.headers.link;
  return { body: response.json() as Page, link: typeof link === 'string' ? link : undefined };
}

/**
 * Walks a list with `limit`, calling `between` after every page, and returns every id seen in order.
 * Checks the envelope, has_more/next_cursor/Link consistency on every page.
 */
async function walk(tenant: Tenant, base: string, limit: number, between: (pageNumber: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const sep = base.includes('?') ? '&' : '?';
  let cursor: string | null = null;
  for (let n = 0; n < 100; n++) {
    const url: string = `${base}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const { body, link } = await page(tenant, url);
    expect(body.object).toBe('list');
    expect(body.data.length).toBeLessThanOrEqual(limit);
    seen.push(...body.data.map((item) => item.id));
    if (!body.has_more) {
      expect(body.next_cursor).toBeNull();
      expect(link).toBeUndefined();
      return seen;
    }
    expect(body.data.length).toBe(limit);
    expect(body.next_cursor).toEqual(expect.any(String));
    expect(link).toMatch(/^<[^>]+>; rel="next"$/);
    cursor = body.next_cursor;
    await between(n);
  }
  throw new Error('pagination did not end');
}

describe('no skips, no repeats while rows are inserted between pages', () => {
  it('leads, newest first: the pages hold exactly the original leads', async () => {
    const tenant = await t.tenant();
    const original: string[] = [];
    for (let i = 0; i < 10; i++) original.unshift((await makeLead(tenant, { name: `lead ${i}` })).id);
    const inserted: string[] = [];
    const seen = await walk(tenant, '/api/v1/leads', 3, async () => {
      inserted.push((await makeLead(tenant, { name: 'late' })).id, (await makeLead(tenant, { name: 'later' })).id);
    });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(original);
    expect(inserted.length).toBeGreaterThan(0);
    // the late ones are there for whoever starts again
    const fresh = (await page(tenant, '/api/v1/leads?limit=100')).body.data.map((l) => l.id);
    expect(fresh).toEqual([...[...inserted].reverse(), ...original]);
  });

  it('chatbots, newest first: the pages hold exactly the original agents', async () => {
    const tenant = await t.tenant();
    const original: string[] = [];
    for (let i = 0; i < 8; i++) original.unshift((await makeChatbot(tenant, { name: `bot ${i}` })).id);
    const seen = await walk(tenant, '/api/v1/chatbots', 3, async () => {
      await makeChatbot(tenant, { name: 'late' });
    });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(original);
  });

  it('leads with a filter: inserts that match the filter do not disturb the walk', async () => {
    const tenant = await t.tenant();
    const original: string[] = [];
    for (let i = 0; i < 7; i++) {
      original.unshift((await makeLead(tenant, { status: 'qualified' })).id);
      await makeLead(tenant, { status: 'new' });
    }
    const seen = await walk(tenant, '/api/v1/leads?status=qualified', 2, async () => {
      await makeLead(tenant, { status: 'qualified' });
    });
    expect(seen).toEqual(original);
  });

  it('messages, oldest first: appended messages show up at the end, with no duplicates and no gaps', async () => {
    const tenant = await t.tenant();
    const conversation = await makeConversation(t.app, tenant);
    const url = `/api/v1/conversations/${conversation.id}/messages`;
    const all: string[] = [];
    for (let i = 0; i < 7; i++) all.push((await must<{ id: string }>(tenant.request('POST', url, { content: `m${i}` }), 201)).id);
    const seen = await walk(tenant, url, 3, async () => {
      all.push((await must<{ id: string }>(tenant.request('POST', url, { content: 'appended' }), 201)).id);
    });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(all);
    expect(all.length).toBeGreaterThan(7);
  });

  it('messages, newest first (order=desc): appended messages never appear, the original ones all do', async () => {
    const tenant = await t.tenant();
    const conversation = await makeConversation(t.app, tenant);
    const url = `/api/v1/conversations/${conversation.id}/messages`;
    const original: string[] = [];
    for (let i = 0; i < 7; i++) original.unshift((await must<{ id: string }>(tenant.request('POST', url, { content: `m${i}` }), 201)).id);
    const seen = await walk(tenant, `${url}?order=desc`, 3, async () => {
      await must(tenant.request('POST', url, { content: 'appended' }), 201);
    });
    expect(seen).toEqual(original);
  });

  it('rows created within the same millisecond are neither skipped nor repeated', async () => {
    const tenant = await t.tenant();
    clock.set(Date.now() + 60_000);
    try {
      const created: string[] = [];
      for (let i = 0; i < 9; i++) created.push((await makeLead(tenant)).id);
      const seen = await walk(tenant, '/api/v1/leads', 2, async () => undefined);
      expect(new Set(seen).size).toBe(9);
      expect([...seen].sort()).toEqual([...created].sort());
      expect(seen).toEqual([...created].sort().reverse());
    } finally {
      clock.release();
    }
  });
});

describe('has_more, next_cursor and the Link header', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await t.tenant();
    for (let i = 0; i < 6; i++) await makeLead(tenant, { status: i % 2 ? 'new' : 'contacted' });
  });

  it('a page that ends exactly at the last item says has_more false (no empty last page)', async () => {
    const first = await page(tenant, '/api/v1/leads?limit=3');
    expect(first.body.has_more).toBe(true);
    const second = await page(tenant, `/api/v1/leads?limit=3&cursor=${encodeURIComponent(first.body.next_cursor!)}`);
    expect(second.body.data).toHaveLength(3);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.link).toBeUndefined();
    const exact = await page(tenant, '/api/v1/leads?limit=6');
    expect(exact.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(exact.link).toBeUndefined();
  });

  it('the Link header carries the same cursor and keeps the filters and the limit', async () => {
    const first = await page(tenant, '/api/v1/leads?status=contacted&limit=2');
    expect(first.body.has_more).toBe(true);
    const target = new URL(/^<([^>]+)>/.exec(first.link!)![1]!, 'http://localhost');
    expect(target.pathname).toBe('/api/v1/leads');
    expect(target.searchParams.get('status')).toBe('contacted');
    expect(target.searchParams.get('limit')).toBe('2');
    expect(target.searchParams.get('cursor')).toBe(first.body.next_cursor);
    const next = await page(tenant, `${target.pathname}${target.search}`);
    expect(next.body.data).toHaveLength(1);
    expect(next.body.has_more).toBe(false);
  });

  it('an empty list is a page too', async () => {
    const empty = await t.tenant();
    const { body, link } = await page(empty, '/api/v1/leads');
    expect(body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    expect(link).toBeUndefined();
  });
});

describe('cursors are opaque and bound to their filters', () => {
  let tenant: Tenant;
  let cursor: string;
  beforeAll(async () => {
    tenant = await t.tenant();
    for (let i = 0; i < 5; i++) await makeLead(tenant, { status: 'new' });
    await makeChatbot(tenant);
    await makeChatbot(tenant);
    cursor = (await page(tenant, '/api/v1/leads?status=new&limit=2')).body.next_cursor!;
    expect(cursor).toEqual(expect.any(String));
  });

  const get = (query: string) => tenant.request('GET', `/api/v1/leads?${query}`);

  it('the untouched cursor works with its own filters', async () => {
    expect((await get(`status=new&limit=2&cursor=${encodeURIComponent(cursor)}`)).statusCode).toBe(200);
  });

  it('a cursor with one character flipped is 400 invalid_cursor', async () => {
    for (const position of [0, Math.floor(cursor.length / 2), cursor.length - 1]) {
      const flipped = cursor.slice(0, position) + (cursor[position] === 'A' ? 'B' : 'A') + cursor.slice(position + 1);
      const response = await get(`status=new&limit=2&cursor=${encodeURIComponent(flipped)}`);
      expectProblem(response, 400, 'invalid_cursor');
    }
  });

  it('a cursor whose position was re-encoded by hand is 400 invalid_cursor', async () => {
    const [createdAt, id, digest] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string, string];
    const moved = Buffer.from(JSON.stringify([new Date(Date.parse(createdAt) + 1000).toISOString(), id, digest])).toString('base64url');
    expectProblem(await get(`status=new&limit=2&cursor=${moved}`), 400, 'invalid_cursor');
  });

  it('garbage cursors are 400 invalid_cursor', async () => {
    for (const garbage of ['garbage', 'e30', Buffer.from('[1,2,3]').toString('base64url'), '!!!', Buffer.from('null').toString('base64url')]) {
      expectProblem(await get(`status=new&cursor=${encodeURIComponent(garbage)}`), 400, 'invalid_cursor');
    }
  });

  it('a cursor reused with different filters is 400 invalid_cursor', async () => {
    expectProblem(await get(`cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_cursor');
    expectProblem(await get(`status=contacted&cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_cursor');
    expectProblem(await get(`status=new&email=a%40b.co&cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_cursor');
    // the page size is not a filter: a cursor may be followed with another limit
    expect((await get(`status=new&limit=5&cursor=${encodeURIComponent(cursor)}`)).statusCode).toBe(200);
  });

  it("a cursor of one conversation's messages is refused on another conversation, and desc vs asc", async () => {
    const c1 = await makeConversation(t.app, tenant);
    const c2 = await makeConversation(t.app, tenant);
    for (const c of [c1, c2]) for (let i = 0; i < 3; i++) await must(tenant.request('POST', `/api/v1/conversations/${c.id}/messages`, { content: `m${i}` }), 201);
    const first = await page(tenant, `/api/v1/conversations/${c1.id}/messages?limit=1`);
    const c = encodeURIComponent(first.body.next_cursor!);
    expectProblem(await tenant.request('GET', `/api/v1/conversations/${c2.id}/messages?cursor=${c}`), 400, 'invalid_cursor');
    expectProblem(await tenant.request('GET', `/api/v1/conversations/${c1.id}/messages?order=desc&cursor=${c}`), 400, 'invalid_cursor');
    expect((await tenant.request('GET', `/api/v1/conversations/${c1.id}/messages?cursor=${c}`)).statusCode).toBe(200);
  });

  it('a cursor issued by one list is refused by another list', async () => {
    const bots = await page(tenant, '/api/v1/chatbots?limit=1');
    const c = encodeURIComponent(bots.body.next_cursor!);
    expectProblem(await tenant.request('GET', `/api/v1/leads?cursor=${c}`), 400, 'invalid_cursor');
  });
});

describe('limit', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await t.tenant();
    for (let i = 0; i < 25; i++) await makeLead(tenant);
  });

  it('defaults to 20', async () => {
    const { body } = await page(tenant, '/api/v1/leads');
    expect(body.data).toHaveLength(20);
    expect(body.has_more).toBe(true);
  });

  it('accepts 1 and 100', async () => {
    expect((await page(tenant, '/api/v1/leads?limit=1')).body.data).toHaveLength(1);
    const max = await page(tenant, '/api/v1/leads?limit=100');
    expect(max.body.data).toHaveLength(25);
    expect(max.body.has_more).toBe(false);
  });

  it.each(['0', '101', '-1', 'abc', '1.5', '', '1e3'])('refuses limit=%s with 400 naming the parameter', async (limit) => {
    for (const list of ['/api/v1/leads', '/api/v1/chatbots', '/api/v1/conversations']) {
      const problem = expectProblem(await tenant.request('GET', `${list}?limit=${limit}`), 400, 'validation_failed');
      expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ parameter: 'limit' })]));
    }
  });
});
