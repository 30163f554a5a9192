import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('LLM configuration', () => {
  it('defaults to the built-in provider, which needs nothing', () => {
    expect(loadConfig({}).llm).toEqual({
      provider: 'builtin',
      model: 'builtin',
      openai: { baseUrl: 'https://api.openai.com/v1', apiKey: null },
      anthropic: { baseUrl: null, apiKey: null },
      timeoutMs: 30_000,
      maxRetries: 1,
      maxOutputTokens: 1024,
      historyMessages: 20,
      knowledgeEntries: 5,
    });
  });

  it('reads the OpenAI-compatible settings, with a default model and no key needed for a local server', () => {
    const { llm } = loadConfig({ LLM_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://localhost:11434/v1/', LLM_TIMEOUT_MS: '5000' });
    expect(llm).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', openai: { baseUrl: 'http://localhost:11434/v1', apiKey: null }, timeoutMs: 5000 });
    expect(loadConfig({ LLM_PROVIDER: 'OpenAI', OPENAI_API_KEY: 'sk-x', LLM_MODEL: 'gpt-4.1' }).llm).toMatchObject({ provider: 'openai', model: 'gpt-4.1' });
    expect(loadConfig({ LLM_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'sk-ant-x' }).llm).toMatchObject({ model: 'claude-haiku-4-5', anthropic: { apiKey: 'sk-ant-x', baseUrl: null } });
  });

  it.each([
    [{ LLM_PROVIDER: 'gemini' }, /LLM_PROVIDER must be one of builtin, openai, anthropic, got "gemini"/],
    [{ LLM_PROVIDER: 'openai' }, /OPENAI_API_KEY is required/],
    [{ LLM_PROVIDER: 'openai', OPENAI_BASE_URL: 'localhost:11434' }, /OPENAI_BASE_URL must be an http\(s\) URL/],
    [{ LLM_PROVIDER: 'anthropic' }, /ANTHROPIC_API_KEY is required/],
    [{ ANTHROPIC_BASE_URL: 'ftp://example.com' }, /ANTHROPIC_BASE_URL must be an http\(s\) URL/],
    [{ LLM_TIMEOUT_MS: '10' }, /LLM_TIMEOUT_MS must be an integer between 100 and 600000/],
    [{ LLM_MAX_RETRIES: 'two' }, /LLM_MAX_RETRIES/],
    [{ LLM_HISTORY_MESSAGES: '0' }, /LLM_HISTORY_MESSAGES/],
    [{ LLM_KNOWLEDGE_ENTRIES: '-1' }, /LLM_KNOWLEDGE_ENTRIES/],
  ])('refuses %o, naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never puts a key in a configuration error', () => {
    expect(() => loadConfig({ LLM_PROVIDER: 'nope', OPENAI_API_KEY: 'sk-secret-123' })).toThrow(/^(?!.*sk-secret-123)/);
  });
});
