import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { decryptSecret, parseSecretKey, secretKeyFile } from '../../src/modules/provider-settings/crypto.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/database.js';
import { signIn, signUp, type DashboardUser } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { startOpenAiServer, type OpenAiTestServer } from '../helpers/openai-server.js';
import { makeActiveChatbot, startConversation, widget } from '../runtime/support.js';

// Issue 33, point 5: the instance's model provider set in the dashboard by its owner (the first account),
// the API key encrypted at rest and never sent back, environment variables winning, and replies using the
// saved provider without a restart. Real app, real database (SQLite or PostgreSQL), a real local server
// speaking OpenAI's wire format.

const KEY = 'sk-saved-9d41c7e2a0b35f68';
const SECRET_KEY = randomBytes(32);

/** Log lines the app writes, to check that no key ever reaches them. */
function logCollector() {
  const raw: string[] = [];
  return { raw, write: (line: string) => void raw.push(line) };
}

/** The stored row, read straight from the database. */
async function storedRow(t: TestApp) {
  return t.app.database.db.selectFrom('provider_settings').selectAll().executeTakeFirst();
}

describe('provider settings in the dashboard', () => {
  let t: TestApp;
  let owner: DashboardUser;
  let other: DashboardUser;
  let server: OpenAiTestServer;
  const logs = logCollector();

  beforeAll(async () => {
    server = await startOpenAiServer({ kind: 'answer', chunks: ['From the ', 'saved provider.'] });
    t = await createTestApp({ secretKey: SECRET_KEY, logLevel: 'debug', llm: { ...testConfig().llm, maxRetries: 0 } }, { logDestination: logs });
    owner = await signUp(t.app, { workspaceName: 'First' });
    other = await signUp(t.app, { workspaceName: 'Second' });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.behave({ kind: 'answer', chunks: ['From the ', 'saved provider.'] });
  });

  it('shows the built-in provider before anything is saved, to every member', async () => {
    const active = await other.request('GET', '/app/api/provider');
    expect(active.statusCode, active.body).toBe(200);
    expect(active.json()).toEqual({ object: 'active_provider', provider: 'builtin', label: 'Built-in', model: 'builtin', base_url: null, source: 'default' });
    const settings = await owner.request('GET', '/app/api/provider/settings');
    expect(settings.statusCode, settings.body).toBe(200);
    expect(settings.json()).toMatchObject({ editable: true, environment_variables: [], saved: null, can_store_api_key: true, problem: null });
    expect((await other.request('GET', '/app/api/provider/models')).json()).toMatchObject({ provider: 'builtin', data: ['builtin'], error: null });
  });

  it('only the instance owner (the first account) may read, save or test the settings: 403 for anyone else', async () => {
    expectProblem(await other.request('GET', '/app/api/provider/settings'), 403, 'not_instance_owner');
    expectProblem(await other.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: server.baseUrl, api_key: KEY }), 403, 'not_instance_owner');
    expectProblem(await other.request('POST', '/app/api/provider/test', {}), 403, 'not_instance_owner');
    expect(await storedRow(t)).toBeUndefined();
    // Not signed in at all: 401.
    expectProblem(await t.app.inject({ method: 'GET', url: '/app/api/provider/settings' }), 401);
  });

  it('refuses settings that cannot work, in words: Anthropic or api.openai.com without a key, a base URL that is not http(s)', async () => {
    expectProblem(await owner.request('PUT', '/app/api/provider/settings', { provider: 'anthropic' }), 400, 'validation_failed');
    expectProblem(await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai' }), 400, 'validation_failed');
    expectProblem(await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: 'ftp://example.com/v1', api_key: KEY }), 400, 'validation_failed');
    expectProblem(await owner.request('PUT', '/app/api/provider/settings', { provider: 'cohere' }), 400, 'validation_failed');
    expect(await storedRow(t)).toBeUndefined();
  });

  it('saves for the owner; the key is never returned, is stored encrypted (AES-256-GCM under SECRET_KEY) and is audited without it', async () => {
    const saved = await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: `${server.baseUrl}/`, model: 'saved-model', api_key: KEY });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.body).not.toContain(KEY);
    expect(saved.json()).toMatchObject({
      active: { provider: 'openai', label: 'OpenAI-compatible', model: 'saved-model', base_url: server.baseUrl, source: 'dashboard' },
      saved: { provider: 'openai', base_url: server.baseUrl, model: 'saved-model', api_key_set: true, api_key_last4: KEY.slice(-4) },
      problem: null,
    });
    const read = await owner.request('GET', '/app/api/provider/settings');
    expect(read.body).not.toContain(KEY);
    expect(read.json().saved).toMatchObject({ api_key_set: true });

    const row = (await storedRow(t))!;
    expect(row.api_key_ciphertext).not.toBeNull();
    expect(row.api_key_ciphertext).not.toBe(KEY);
    expect(row.api_key_ciphertext).not.toContain(KEY);
    expect(row.api_key_ciphertext).not.toContain(Buffer.from(KEY).toString('base64').slice(0, 12));
    expect(decryptSecret(SECRET_KEY, row.api_key_ciphertext!)).toBe(KEY);
    expect(() => decryptSecret(randomBytes(32), row.api_key_ciphertext!)).toThrow();

    const audit = await t.app.database.db.selectFrom('audit_events').select(['action', 'changes']).where('workspace_id', '=', owner.workspaceId).where('action', '=', 'provider_settings.updated').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.changes).not.toContain(KEY);
    expect(JSON.parse(audit[0]!.changes)).toMatchObject({ provider: { before: null, after: 'openai' }, api_key: { before: null, after: `…${KEY.slice(-4)}` } });

    // Saving again without a key keeps it; the active provider is what every member sees.
    expect((await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: server.baseUrl, model: 'saved-model' })).json().saved.api_key_set).toBe(true);
    expect((await other.request('GET', '/app/api/provider')).json()).toMatchObject({ provider: 'openai', model: 'saved-model', source: 'dashboard' });
  });

  it('a reply uses the saved provider at once, without a restart, and the built-in one again once it is chosen back', async () => {
    const tenant = await t.tenant();
    const bot = await makeActiveChatbot(tenant);
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);

    await owner.request('PUT', '/app/api/provider/settings', { provider: 'builtin' });
    const builtin = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Hello?' } });
    expect(builtin.statusCode, builtin.body).toBe(201);
    expect(builtin.json().reply.content).not.toBe('From the saved provider.');
    expect(server.requests).toHaveLength(0);

    expect((await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: server.baseUrl, model: 'saved-model', api_key: KEY })).statusCode).toBe(200);
    const answered = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'When are you open?' } });
    expect(answered.statusCode, answered.body).toBe(201);
    expect(answered.json().reply.content).toBe('From the saved provider.');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.path).toBe('/v1/chat/completions');
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[0]!.body).toMatchObject({ model: 'saved-model', stream: true });

    await owner.request('PUT', '/app/api/provider/settings', { provider: 'builtin' });
    const back = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'And on Sunday?' } });
    expect(back.json().reply.content).not.toBe('From the saved provider.');
    expect(server.requests).toHaveLength(1);
    expect(logs.raw.join('')).not.toContain(KEY);
  });

  it('test connection: ok against the real wire format, and the provider\'s 401 in words with the key redacted', async () => {
    const ok = await owner.request('POST', '/app/api/provider/test', { provider: 'openai', base_url: server.baseUrl, model: 'probe-model', api_key: KEY });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ object: 'connection_test', ok: true });
    expect(ok.json().message).toContain('probe-model answered');
    // The server has no /models: the test falls back to a one-token completion.
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/models', '/v1/chat/completions']);
    expect(server.requests[1]!.body).toMatchObject({ model: 'probe-model', max_tokens: 1 });

    const wrong = 'sk-wrong-5b2e8f1a9c3d7e60';
    server.behave({ kind: 'status', status: 401, message: `Incorrect API key provided: ${wrong}.` });
    const refused = await owner.request('POST', '/app/api/provider/test', { provider: 'openai', base_url: server.baseUrl, api_key: wrong });
    expect(refused.statusCode, refused.body).toBe(200);
    expect(refused.json()).toMatchObject({ ok: false, models: null });
    expect(refused.json().message).toMatch(/^The provider answered 401 Unauthorized: Incorrect API key provided: \[redacted\]\.$/);
    expect(refused.body).not.toContain(wrong);

    // Nothing listening: the connection error in words, not a 5xx.
    const closed = await owner.request('POST', '/app/api/provider/test', { provider: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: KEY });
    expect(closed.json()).toMatchObject({ ok: false });
    expect(closed.json().message).toContain('Could not reach http://127.0.0.1:9/v1/models');
  });

  it('test connection sends the saved key only to the saved base URL: another URL without a key is 400 api_key_required, and gets no request', async () => {
    const elsewhere = await startOpenAiServer({ kind: 'answer', chunks: ['OK'] });
    try {
      expect((await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: server.baseUrl, model: 'saved-model', api_key: KEY })).statusCode).toBe(200);

      const refused = expectProblem(await owner.request('POST', '/app/api/provider/test', { provider: 'openai', base_url: elsewhere.baseUrl, model: 'probe-model' }), 400, 'api_key_required');
      expect(refused.detail).toContain('The saved API key is only sent to the saved base URL');
      expect(refused.errors).toEqual([{ pointer: '/api_key', message: expect.any(String) }]);
      expect(elsewhere.requests).toHaveLength(0);
      // The provider's own URL (no base URL given) is another URL too when a local one is saved.
      expectProblem(await owner.request('POST', '/app/api/provider/test', { provider: 'openai', model: 'probe-model' }), 400, 'api_key_required');
      expect(server.requests).toHaveLength(0);

      // With a key of its own, or explicitly none, the other URL is tested with that: never the saved key.
      const own = await owner.request('POST', '/app/api/provider/test', { provider: 'openai', base_url: elsewhere.baseUrl, model: 'probe-model', api_key: 'sk-other-1f2e3d4c5b6a7980' });
      expect(own.statusCode, own.body).toBe(200);
      expect(own.json()).toMatchObject({ ok: true });
      const withOwnKey = elsewhere.requests.splice(0);
      expect(withOwnKey.length).toBeGreaterThan(0);
      for (const request of withOwnKey) expect(request.headers.authorization).toBe('Bearer sk-other-1f2e3d4c5b6a7980');
      const none = await owner.request('POST', '/app/api/provider/test', { provider: 'openai', base_url: elsewhere.baseUrl, model: 'probe-model', api_key: null });
      expect(none.json()).toMatchObject({ ok: true });
      expect(elsewhere.requests.length).toBeGreaterThan(0);
      for (const request of elsewhere.requests) expect(request.headers.authorization).toBeUndefined();
      expect(JSON.stringify([...withOwnKey, ...elsewhere.requests])).not.toContain(KEY);

      // The saved URL, however it is spelled (trailing slash, host case), still tests with the saved key.
      const savedUrl = new URL(server.baseUrl);
      const spelled = `${savedUrl.protocol}//${savedUrl.host.toUpperCase()}${savedUrl.pathname}/`;
      const same = await owner.request('POST', '/app/api/provider/test', { provider: 'openai', base_url: spelled, model: 'probe-model' });
      expect(same.json()).toMatchObject({ ok: true });
      expect(server.requests.length).toBeGreaterThan(0);
      for (const request of server.requests) expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      await elsewhere.close();
    }
  });

  it('lists the provider\'s models from its /models, for any member', async () => {
    const models = await startModelsServer(KEY, ['gpt-b', 'gpt-a']);
    try {
      await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: models.baseUrl, api_key: KEY });
      const listed = await other.request('GET', '/app/api/provider/models');
      expect(listed.json()).toEqual({ object: 'provider_models', provider: 'openai', default_model: 'gpt-4o-mini', data: ['gpt-a', 'gpt-b'], error: null });
      const tested = await owner.request('POST', '/app/api/provider/test', {});
      expect(tested.json()).toMatchObject({ ok: true, models: ['gpt-a', 'gpt-b'] });
      // A provider that cannot list them: an empty list and the reason, for the picker to fall back to a text field.
      await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: models.baseUrl, api_key: 'sk-not-the-right-key-000' });
      expect((await other.request('GET', '/app/api/provider/models')).json()).toMatchObject({ data: [], error: expect.stringContaining('401') });
    } finally {
      await models.close();
    }
  });
});

/** A server answering GET /v1/models in OpenAI's list format, to the right key only. */
async function startModelsServer(key: string, ids: string[]) {
  const server = http.createServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${key}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Invalid API key' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: ids.map((id) => ({ id, object: 'model', owned_by: 'test' })) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('environment variables win', () => {
  it('with LLM_PROVIDER set the settings are read-only (PUT 409) and the environment\'s provider is the active one', async () => {
    const server = await startOpenAiServer({ kind: 'answer', chunks: ['From the environment.'] });
    const env = loadConfig({ LLM_PROVIDER: 'openai', OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-env-0f9e8d7c6b5a', LLM_MODEL: 'env-model', LLM_MAX_RETRIES: '0' });
    const t = await createTestApp({ llm: env.llm, llmEnvironment: env.llmEnvironment, secretKey: SECRET_KEY });
    try {
      const owner = await signUp(t.app);
      const settings = await owner.request('GET', '/app/api/provider/settings');
      expect(settings.json()).toMatchObject({
        editable: false,
        environment_variables: ['LLM_PROVIDER', 'LLM_MODEL', 'OPENAI_BASE_URL', 'OPENAI_API_KEY'],
        active: { provider: 'openai', model: 'env-model', source: 'environment' },
      });
      expect(settings.body).not.toContain('sk-env-0f9e8d7c6b5a');
      const refused = expectProblem(await owner.request('PUT', '/app/api/provider/settings', { provider: 'builtin' }), 409, 'provider_set_by_environment');
      expect(refused.detail).toContain('set by environment variables on this server (LLM_PROVIDER, LLM_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY)');
      expect(await storedRow(t)).toBeUndefined();
      // A row written by other means is ignored: the environment's provider answers.
      await t.app.database.db.insertInto('provider_settings').values({ id: 'instance', provider: 'builtin', base_url: null, model: null, api_key_ciphertext: null, api_key_last4: null, updated_at: new Date().toISOString(), updated_by: null }).execute();
      const tenant = await t.tenant();
      const bot = await makeActiveChatbot(tenant);
      const { conversation_id: id, visitor_token: token } = await startConversation(t.app, bot.id);
      const answered = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, body: { content: 'Hi' } });
      expect(answered.json().reply.content).toBe('From the environment.');
    } finally {
      await t.close();
      await server.close();
    }
  });
});

describe('SECRET_KEY', () => {
  it('is 32 bytes as base64 or hex; anything else is a ConfigError that does not repeat the value', () => {
    const key = randomBytes(32);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64url'))).toEqual(key);
    expect(parseSecretKey(undefined)).toBeNull();
    expect(loadConfig({ SECRET_KEY: key.toString('hex') }).secretKey).toEqual(key);
    for (const bad of ['hunter2-short-secret', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), 'z'.repeat(64)]) {
      expect(() => loadConfig({ SECRET_KEY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ SECRET_KEY: bad })).toThrow(/SECRET_KEY must be 32 bytes written as base64 .* or hex/);
      try {
        loadConfig({ SECRET_KEY: bad });
      } catch (error) {
        expect((error as Error).message).not.toContain(bad);
      }
    }
  });

  it.runIf(backend === 'sqlite')('SQLite without SECRET_KEY: generated on the first start into secret.key beside the database (0600, one log line), reused on the next', async () => {
    const config = testConfig({ logLevel: 'info' });
    const file = secretKeyFile((config.database as { path: string }).path);
    const first = logCollector();
    const app = await buildApp(config, { logDestination: first });
    await app.ready();
    let second: Awaited<ReturnType<typeof buildApp>> | null = null;
    try {
      expect(fs.existsSync(file)).toBe(true);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const lines = first.raw.filter((line) => line.includes('secret.key'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`wrote it to ${file}`);
      const key = fs.readFileSync(file, 'utf8');
      expect(lines[0]).not.toContain(key.trim());
      const owner = await signUp(app);
      expect((await owner.request('PUT', '/app/api/provider/settings', { provider: 'anthropic', api_key: KEY })).statusCode).toBe(200);
      await app.close();

      const again = logCollector();
      second = await buildApp(config, { logDestination: again });
      await second.ready();
      expect(fs.readFileSync(file, 'utf8')).toBe(key);
      expect(again.raw.filter((line) => line.includes('secret.key'))).toHaveLength(0);
      const row = await second.database.db.selectFrom('provider_settings').select('api_key_ciphertext').executeTakeFirstOrThrow();
      expect(decryptSecret(parseSecretKey(key)!, row.api_key_ciphertext!)).toBe(KEY);
      // The restarted instance reads the saved key with the kept key: no problem reported.
      const again2 = await signIn(second, owner.email, owner.password);
      expect((await again2.request('GET', '/app/api/provider/settings')).json()).toMatchObject({ saved: { provider: 'anthropic', api_key_set: true }, problem: null });
    } finally {
      if (second) await second.close();
      else await app.close();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it.runIf(backend === 'postgres')('PostgreSQL without SECRET_KEY: no key is generated; saving an API key is 409 in words, settings without one still save', async () => {
    // The suites give every PostgreSQL database a SECRET_KEY (test/helpers/database.ts): this one has none.
    const t = await createTestApp({ secretKey: null });
    try {
      const owner = await signUp(t.app);
      expect((await owner.request('GET', '/app/api/provider/settings')).json()).toMatchObject({ can_store_api_key: false });
      const refused = expectProblem(await owner.request('PUT', '/app/api/provider/settings', { provider: 'anthropic', api_key: KEY }), 409, 'secret_key_required');
      expect(refused.detail).toContain('Set SECRET_KEY on every instance to save a provider API key');
      expect(await storedRow(t)).toBeUndefined();
      const keyless = await owner.request('PUT', '/app/api/provider/settings', { provider: 'openai', base_url: 'http://127.0.0.1:11434/v1', model: 'llama3' });
      expect(keyless.statusCode, keyless.body).toBe(200);
      expect(keyless.json().saved).toMatchObject({ provider: 'openai', api_key_set: false });
    } finally {
      await t.close();
    }
  });
});
