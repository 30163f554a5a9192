import type { LlmProvider } from '../../config.js';

/** A provider to call: what is saved, submitted in the form, or set by the environment. */
export interface ProviderTarget {
  provider: LlmProvider;
  /** Null: the provider's own (https://api.openai.com/v1, https://api.anthropic.com/v1). */
  baseUrl: string | null;
  model: string;
  apiKey: string | null;
}

/** The outcome of "test connection": ok, or the provider's error in words (the key never in them). */
export interface ConnectionResult {
  ok: boolean;
  message: string;
  /** The models the provider lists, when it answered its /models. */
  models: string[] | null;
}

/** A failed call to a provider, its message already in words and redacted. */
export class ProviderCallError extends Error {
  override name = 'ProviderCallError';
  constructor(
    message: string,
    /** The HTTP status the provider answered, if it answered. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** Most model ids kept from a /models answer. */
const MAX_MODELS = 500;

/** The base URL calls go to: the saved one, else the provider's own. */
export function baseUrlOf(target: Pick<ProviderTarget, 'provider' | 'baseUrl'>): string {
  const fallback = target.provider === 'anthropic' ? 'https://api.anthropic.com/v1' : 'https://api.openai.com/v1';
  return (target.baseUrl ?? fallback).replace(/\/+$/, '');
}

function headersOf(target: ProviderTarget): Record<string, string> {
  if (target.provider === 'anthropic') return { 'x-api-key': target.apiKey ?? '', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
  return { 'content-type': 'application/json', ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}) };
}

function redact(text: string, target: ProviderTarget): string {
  return (target.apiKey ? text.replaceAll(target.apiKey, '[redacted]') : text).slice(0, 500);
}

/** The message of an OpenAI (`{error:{message}}`) or Anthropic (`{type:'error',error:{message}}`) error body, else its start. */
function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'object' && typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not JSON: the text itself.
  }
  return body.trim().slice(0, 200);
}

/** One HTTP call with a deadline; failures become ProviderCallError in words. */
async function call(target: ProviderTarget, method: 'GET' | 'POST', path: string, timeoutMs: number, body?: unknown): Promise<unknown> {
  const url = `${baseUrlOf(target)}${path}`;
  let response: Response;
  try {
    response = await fetch(url, { method, headers: headersOf(target), signal: AbortSignal.timeout(timeoutMs), ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (error) {
    const { name, cause } = error as { name?: string; cause?: { code?: string; message?: string } };
    if (name === 'TimeoutError' || name === 'AbortError') throw new ProviderCallError(`The provider did not answer within ${Math.round(timeoutMs / 1000)} s (${url}).`);
    throw new ProviderCallError(redact(`Could not reach ${url}: ${cause?.code ?? cause?.message ?? String(error)}.`, target));
  }
  const text = await response.text();
  if (!response.ok) {
    const detail = providerMessage(text);
    throw new ProviderCallError(redact(`The provider answered ${response.status} ${response.statusText}${detail ? `: ${detail}` : ''}`, target), response.status);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderCallError(`The provider answered ${url} with something that is not JSON.`, response.status);
  }
}

/** The model ids the provider lists at `/models` (OpenAI-compatible and Anthropic alike), sorted; builtin → ["builtin"]. */
export async function listModels(target: ProviderTarget, timeoutMs: number): Promise<string[]> {
  if (target.provider === 'builtin') return ['builtin'];
  const answer = (await call(target, 'GET', target.provider === 'anthropic' ? '/models?limit=1000' : '/models', timeoutMs)) as { data?: unknown };
  if (!Array.isArray(answer.data)) throw new ProviderCallError('The provider\'s /models answer has no "data" list.');
  const ids = answer.data.map((entry) => (entry as { id?: unknown }).id).filter((id): id is string => typeof id === 'string' && id !== '');
  return [...new Set(ids)].sort().slice(0, MAX_MODELS);
}

/** Asks the model for one token: proves the key, the URL and the model name together. */
async function oneToken(target: ProviderTarget, timeoutMs: number): Promise<void> {
  const messages = [{ role: 'user', content: 'Say OK.' }];
  if (target.provider === 'anthropic') await call(target, 'POST', '/messages', timeoutMs, { model: target.model, max_tokens: 1, messages });
  else await call(target, 'POST', '/chat/completions', timeoutMs, { model: target.model, max_tokens: 1, messages, stream: false });
}

/**
 * Test connection: lists the models; when the server has no /models (404/405: some OpenAI-compatible
 * servers), asks for a one-token completion instead. Never throws.
 */
export async function testConnection(target: ProviderTarget, timeoutMs: number): Promise<ConnectionResult> {
  if (target.provider === 'builtin') return { ok: true, message: 'The built-in provider answers from the agents\' knowledge; there is nothing to connect to.', models: ['builtin'] };
  try {
    const models = await listModels(target, timeoutMs);
    return { ok: true, message: `Connected to ${baseUrlOf(target)}: ${models.length} model${models.length === 1 ? '' : 's'} available.`, models };
  } catch (error) {
    if (!(error instanceof ProviderCallError)) return { ok: false, message: 'The provider could not be tested.', models: null };
    if (error.status !== 404 && error.status !== 405) return { ok: false, message: error.message, models: null };
  }
  try {
    await oneToken(target, timeoutMs);
    return { ok: true, message: `Connected to ${baseUrlOf(target)}: the model ${target.model} answered.`, models: null };
  } catch (error) {
    return { ok: false, message: error instanceof ProviderCallError ? error.message : 'The provider could not be tested.', models: null };
  }
}
