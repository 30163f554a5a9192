import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { startAnthropicServer, type AnthropicTestServer } from '../helpers/anthropic-server.js';
import { conversationWith, engineWith, streamRecorder } from './support.js';

const KEY = 'sk-ant-test-8d2e6b1f0a';
const INSTRUCTIONS = 'You are the assistant of Acme Bikes.';
const HOURS = { title: 'Opening hours', content: 'We are open Monday to Friday, 9am to 5pm.' };

let t: TestApp;
let tenant: Tenant;
let server: AnthropicTestServer;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
  server = await startAnthropicServer();
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

function anthropic(env: Record<string, string> = {}) {
  return engineWith(t, { LLM_PROVIDER: 'anthropic', ANTHROPIC_BASE_URL: server.baseUrl, ANTHROPIC_API_KEY: KEY, LLM_MAX_RETRIES: '0', ...env });
}

describe('Anthropic provider', () => {
  it('sends the instructions as the system prompt and the transcript as turns, and streams the answer', async () => {
    server.requests.length = 0;
    const chunks = ['Monday to Friday, ', '9am to 5pm [1].'];
    server.behave({ kind: 'answer', chunks });
    const { input } = await conversationWith(t, tenant, { instructions: INSTRUCTIONS, knowledge: [HOURS], temperature: 0.5 }, [
      ['assistant', 'Hi! How can I help you today?'],
      ['user', 'Hello'],
      ['operator', 'Hi, a colleague here.'],
      ['user', 'When are you open?'],
    ]);
    const stream = streamRecorder();
    const output = await anthropic().engine.reply({ ...input, ...stream });

    expect(output).toMatchObject({ content: chunks.join(''), fallback: false, source: 'anthropic:claude-haiku-4-5', sources: [expect.objectContaining({ title: HOURS.title })], outcome: 'answered' });
    expect(stream.deltas).toEqual(chunks);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.headers['x-api-key']).toBe(KEY);
    expect(request!.headers['anthropic-version']).toBeTruthy();
    expect(request!.body).toMatchObject({ model: 'claude-haiku-4-5', temperature: 0.5, stream: true, max_tokens: 1024 });
    const system = request!.body.system as Array<{ type: string; text: string }>;
    expect(system[0]!.text.startsWith(INSTRUCTIONS)).toBe(true);
    expect(system[0]!.text).toContain(HOURS.content);
    // The welcome message before the visitor's first turn is left out (the API wants a visitor turn first).
    const turns = (request!.body.messages as Array<{ role: string; content: Array<{ type: string; text: string }> }>).map((message) => [
      message.role,
      message.content.map((part) => part.text).join(' | '),
    ]);
    expect(turns).toEqual([
      ['user', 'Hello'],
      ['assistant', 'Hi, a colleague here.'],
      ['user', 'When are you open?'],
    ]);
  });

  it('answers an API error with the fallback and logs it without the key', async () => {
    server.requests.length = 0;
    server.behave({ kind: 'status', status: 529, type: 'overloaded_error', message: 'Overloaded' });
    const { input } = await conversationWith(t, tenant, { model: 'claude-agent-model' }, [['user', 'Hello?']]);
    const { engine, logs, rawLogs } = anthropic();
    const output = await engine.reply(input);
    expect(output).toMatchObject({ fallback: true, failure: 'error', source: 'anthropic:claude-agent-model' });
    expect(server.requests[0]!.body.model).toBe('claude-agent-model');
    expect(logs().filter((line) => line.level === 40)).toEqual([expect.objectContaining({ failure: 'error', error: expect.stringContaining('Overloaded') })]);
    expect(rawLogs()).not.toContain(KEY);
  });
});
