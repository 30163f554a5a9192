import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach } from 'vitest';
import type { Tenant } from '../helpers/app.js';
import { startSite, type SiteOptions, type TestSite } from '../helpers/site-server.js';

/** A multipart/form-data body with one file field (`file` unless named) and other text fields. */
export function multipart(file: { name: string; type: string; bytes: Uint8Array | string; field?: string }, fields: Record<string, string> = {}) {
  const boundary = `----e30boundary${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`));
  parts.push(typeof file.bytes === 'string' ? Buffer.from(file.bytes) : Buffer.from(file.bytes));
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Uploads a file source through the API (multipart/form-data). */
export function upload(
  app: FastifyInstance,
  tenant: Pick<Tenant, 'key'>,
  chatbotId: string,
  file: { name: string; type: string; bytes: Uint8Array | string; field?: string },
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const { payload, contentType } = multipart(file, fields);
  return app.inject({
    method: 'POST',
    url: `/api/v1/chatbots/${chatbotId}/sources`,
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': contentType, ...headers },
    payload,
  });
}

/** Polls a source until its status is one of `statuses` (ingestion runs in the job runner), at most `ms`. */
export async function waitForStatus(tenant: Tenant, chatbotId: string, sourceId: string, statuses: string[], ms = 20_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const response = await tenant.request('GET', `/api/v1/chatbots/${chatbotId}/sources/${sourceId}`);
    const body = response.json();
    if (statuses.includes(body.status) || Date.now() > deadline) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** For a test file: a startSite whose sites are closed after each test. */
export function sitesClosedAfterEach(): (options: SiteOptions) => Promise<TestSite> {
  const sites: TestSite[] = [];
  afterEach(async () => {
    await Promise.all(sites.splice(0).map((site) => site.close()));
  });
  return async (options) => {
    const started = await startSite(options);
    sites.push(started);
    return started;
  };
}
