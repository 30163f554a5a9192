import type { Kysely } from 'kysely';
import { DEFAULT_MODELS, type LlmConfig, type LlmProvider } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import type { AuditWriter, Changes } from '../audit/writer.js';
import { decryptSecret, encryptSecret, type SecretKey } from './crypto.js';
import { baseUrlOf, listModels, testConnection, type ProviderTarget } from './remote.js';
import { providerSettingsRepository, type ProviderSettingsRow } from './repository.js';
import type { ActiveProviderView, ConnectionTestView, ProviderModelsView, ProviderSettingsView, SaveProviderSettingsInput, TestProviderInput } from './schema.js';

/** Longest a test connection or a models list waits for the provider. */
const REMOTE_TIMEOUT_MS = 10_000;

const LABELS: Record<LlmProvider, string> = { builtin: 'Built-in', openai: 'OpenAI-compatible', anthropic: 'Anthropic' };

/** What the service is built from. */
export interface ProviderSettingsDeps {
  db: Kysely<Database>;
  clock: Clock;
  audit: AuditWriter;
  /** The provider of the configuration (environment variables, or the built-in default). */
  llm: LlmConfig;
  /** The provider variables set in the environment: when any is, `llm` answers and the settings are read-only. */
  llmEnvironment: string[];
  /** The key stored API keys are encrypted under (null: none, PostgreSQL without SECRET_KEY). */
  secretKey: SecretKey;
}

/** A URL without user name and password, for display. */
function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return raw;
  }
}

/**
 * The instance's model provider (issue 33, point 5): the settings its owner saves in the dashboard, the
 * API key encrypted at rest, and the provider in effect, which environment variables decide when set.
 */
export function createProviderSettingsService({ db, clock, audit, llm, llmEnvironment, secretKey }: ProviderSettingsDeps) {
  const fromEnvironment = llmEnvironment.length > 0;
  let built: { updatedAt: string; llm: LlmConfig } | null = null;

  function decryptedKey(row: ProviderSettingsRow): string | null {
    if (row.api_key_ciphertext === null) return null;
    if (!secretKey.key) throw new Error('a provider API key is saved but this server has no SECRET_KEY to decrypt it');
    try {
      return decryptSecret(secretKey.key, row.api_key_ciphertext);
    } catch {
      throw new Error('the saved provider API key does not decrypt with this server\'s key (was SECRET_KEY or secret.key changed?): save the key again in Settings → Model provider');
    }
  }

  function llmOf(row: ProviderSettingsRow): LlmConfig {
    const apiKey = decryptedKey(row);
    return {
      ...llm,
      provider: row.provider,
      model: row.model ?? DEFAULT_MODELS[row.provider],
      openai: row.provider === 'openai' ? { baseUrl: baseUrlOf({ provider: row.provider, baseUrl: row.base_url }), apiKey } : { baseUrl: baseUrlOf({ provider: 'openai', baseUrl: null }), apiKey: null },
      anthropic: row.provider === 'anthropic' ? { baseUrl: row.base_url, apiKey } : { baseUrl: null, apiKey: null },
    };
  }

  function targetOf(config: LlmConfig): ProviderTarget {
    const side = config.provider === 'anthropic' ? config.anthropic : config.provider === 'openai' ? config.openai : { baseUrl: null, apiKey: null };
    return { provider: config.provider, baseUrl: side.baseUrl, model: config.model, apiKey: side.apiKey };
  }

  function activeOf(provider: LlmProvider, model: string, baseUrl: string | null, source: ActiveProviderView['source']): ActiveProviderView {
    return { object: 'active_provider', provider, label: LABELS[provider], model, base_url: provider === 'builtin' ? null : shownUrl(baseUrlOf({ provider, baseUrl })), source };
  }

  async function active(row?: ProviderSettingsRow | null): Promise<ActiveProviderView> {
    const target = targetOf(llm);
    if (fromEnvironment) return activeOf(target.provider, target.model, target.baseUrl, 'environment');
    const saved = row === undefined ? await providerSettingsRepository.find(db) : row;
    if (saved) return activeOf(saved.provider, saved.model ?? DEFAULT_MODELS[saved.provider], saved.base_url, 'dashboard');
    return activeOf(target.provider, target.model, target.baseUrl, 'default');
  }

  async function requireOwner(ctx: OperationContext): Promise<void> {
    const owner = await providerSettingsRepository.ownerId(db);
    if (ctx.actor.type !== 'user' || ctx.actor.id !== owner) {
      throw new AppError('not_instance_owner', 'Only the owner of this instance (the first account created on it) can see and change the model provider.');
    }
  }

  async function present(row: ProviderSettingsRow | null): Promise<ProviderSettingsView> {
    let problem: string | null = null;
    if (row && !fromEnvironment) {
      try {
        decryptedKey(row);
      } catch (error) {
        problem = `${(error as Error).message[0]!.toUpperCase()}${(error as Error).message.slice(1)}.`;
      }
    }
    return {
      object: 'provider_settings',
      active: await active(row),
      editable: !fromEnvironment,
      environment_variables: llmEnvironment,
      saved: row
        ? { provider: row.provider, base_url: row.base_url, model: row.model, api_key_set: row.api_key_ciphertext !== null, api_key_last4: row.api_key_last4, updated_at: row.updated_at }
        : null,
      can_store_api_key: secretKey.key !== null,
      problem,
    };
  }

  /**
   * The provider configuration a reply uses now: the environment's when it sets one, else the saved row,
   * else the configuration's default. The one row is read per call (a primary-key lookup, far below a model
   * call), so a change saved on any instance applies to the next reply on every instance; the configuration
   * built from a row is reused while its `updated_at` stays the same.
   */
  async function effectiveLlm(): Promise<LlmConfig> {
    if (fromEnvironment) return llm;
    const row = await providerSettingsRepository.find(db);
    if (!row) return llm;
    if (built?.updatedAt !== row.updated_at) built = { updatedAt: row.updated_at, llm: llmOf(row) };
    return built.llm;
  }

  /**
   * What a test connection calls. The saved key stands in for an omitted one only towards the saved base URL:
   * a test of another URL without a key is refused (400 `api_key_required`) rather than sending the saved key
   * to wherever the form points.
   */
  async function testTarget(input: TestProviderInput): Promise<ProviderTarget> {
    if (fromEnvironment || input.provider === undefined) return targetOf(await effectiveLlm());
    const saved = await providerSettingsRepository.find(db);
    const baseUrl = input.base_url?.replace(/\/+$/, '') ?? null;
    let apiKey = typeof input.api_key === 'string' && input.api_key.trim() !== '' ? input.api_key.trim() : null;
    if (input.api_key === undefined && saved?.provider === input.provider && saved.api_key_ciphertext !== null) {
      if (!sameEndpoint({ provider: input.provider, baseUrl }, { provider: saved.provider, baseUrl: saved.base_url })) {
        throw new AppError(
          'api_key_required',
          'The saved API key is only sent to the saved base URL. To test another base URL, enter its API key (or remove the key to test without one).',
          { errors: [{ pointer: '/api_key', message: 'is required to test a base URL other than the saved one' }] },
        );
      }
      apiKey = decryptedKey(saved);
    }
    return { provider: input.provider, baseUrl, model: input.model?.trim() || DEFAULT_MODELS[input.provider], apiKey };
  }

  return {
    effectiveLlm,

    /** The provider in effect, for any signed-in member (the agent page). */
    active: () => active(),

    /** The settings as the owner sees them (never the key). */
    async get(ctx: OperationContext): Promise<ProviderSettingsView> {
      await requireOwner(ctx);
      return present((await providerSettingsRepository.find(db)) ?? null);
    },

    /** Saves the settings (owner only; 409 when environment variables choose the provider). Audited, the key never in the entry. */
    async save(ctx: OperationContext, input: SaveProviderSettingsInput): Promise<ProviderSettingsView> {
      await requireOwner(ctx);
      if (fromEnvironment) {
        throw new AppError('provider_set_by_environment', `The model provider is set by environment variables on this server (${llmEnvironment.join(', ')}); unset them to choose it here.`);
      }
      const newKey = typeof input.api_key === 'string' && input.api_key.trim() !== '' ? input.api_key.trim() : null;
      if (newKey !== null && !secretKey.key) {
        throw new AppError('secret_key_required', 'Set SECRET_KEY on every instance to save a provider API key (32 bytes as base64 or hex, the same on all of them; e.g. `openssl rand -base64 32`).');
      }
      const saved = await inTransaction(db, ctx, async (trx) => {
        const before = (await providerSettingsRepository.find(trx)) ?? null;
        const builtin = input.provider === 'builtin';
        // A key belongs to its provider: switching providers without a new key drops the old one.
        const keep = input.api_key === undefined && before !== null && before.provider === input.provider && !builtin;
        const row: ProviderSettingsRow = {
          provider: input.provider,
          base_url: builtin ? null : (input.base_url?.replace(/\/+$/, '') ?? null),
          model: builtin ? null : (input.model?.trim() || null),
          api_key_ciphertext: keep ? before.api_key_ciphertext : newKey && !builtin ? encryptSecret(secretKey.key!, newKey) : null,
          // The last four characters help recognise a key; a key too short to spare them shows none.
          api_key_last4: keep ? before.api_key_last4 : newKey && !builtin && newKey.length >= 16 ? newKey.slice(-4) : null,
          updated_at: clock.now().toISOString(),
          updated_by: ctx.actor.id,
        };
        checkUsable(row);
        await providerSettingsRepository.save(trx, row);
        await audit.record(trx, ctx, { action: 'provider_settings.updated', target: { type: 'provider_settings', id: 'instance' }, changes: changesOf(before, row) });
        return row;
      });
      return present(saved);
    },

    /** Test connection (owner only): the submitted settings (the saved key when none is submitted), or the active ones. */
    async test(ctx: OperationContext, input: TestProviderInput): Promise<ConnectionTestView> {
      await requireOwner(ctx);
      let target: ProviderTarget;
      try {
        target = await testTarget(input);
      } catch (error) {
        // A refused request is a problem; a saved key that no longer decrypts is the test's answer in words.
        if (error instanceof AppError) throw error;
        return { object: 'connection_test', ok: false, message: (error as Error).message, models: null };
      }
      return { object: 'connection_test', ...(await testConnection(target, Math.min(llm.timeoutMs, REMOTE_TIMEOUT_MS))) };
    },

    /** The active provider's models, for any member choosing an agent's model; an error in words when they cannot be listed. */
    async models(): Promise<ProviderModelsView> {
      const target = targetOf(await effectiveLlm().catch(() => llm));
      const base = { object: 'provider_models' as const, provider: target.provider, default_model: target.model };
      try {
        return { ...base, data: await listModels(target, Math.min(llm.timeoutMs, REMOTE_TIMEOUT_MS)), error: null };
      } catch (error) {
        return { ...base, data: [], error: (error as Error).message };
      }
    },
  };

  /** The rules LLM_PROVIDER has at startup, as field errors: OpenAI itself and Anthropic need a key. */
  function checkUsable(row: ProviderSettingsRow): void {
    if (row.api_key_ciphertext !== null) return;
    if (row.provider === 'anthropic') throw AppError.validation('Anthropic needs an API key.', [{ pointer: '/api_key', message: 'is required for Anthropic' }]);
    if (row.provider === 'openai' && new URL(baseUrlOf({ provider: row.provider, baseUrl: row.base_url })).hostname === 'api.openai.com') {
      throw AppError.validation('OpenAI needs an API key (a local OpenAI-compatible server with its own base URL may not).', [{ pointer: '/api_key', message: 'is required for https://api.openai.com' }]);
    }
  }
}

/** Whether two targets call the same base URL (compared as URLs: a trailing slash or the host's case does not matter). */
function sameEndpoint(a: Pick<ProviderTarget, 'provider' | 'baseUrl'>, b: Pick<ProviderTarget, 'provider' | 'baseUrl'>): boolean {
  try {
    return new URL(baseUrlOf(a)).href === new URL(baseUrlOf(b)).href;
  } catch {
    return false;
  }
}

/** The audited changes: provider, URL and model as they are; the key only as "set" or its last four characters. */
function changesOf(before: ProviderSettingsRow | null, after: ProviderSettingsRow): Changes {
  const changes: Changes = {};
  for (const field of ['provider', 'base_url', 'model'] as const) {
    const old = before?.[field] ?? null;
    if (old !== after[field]) changes[field] = { before: old, after: after[field] };
  }
  const keyOf = (row: ProviderSettingsRow | null) => (row?.api_key_ciphertext ? `…${row.api_key_last4 ?? ''}` : null);
  if ((before?.api_key_ciphertext ?? null) !== after.api_key_ciphertext) changes.api_key = { before: keyOf(before), after: keyOf(after) };
  return changes;
}

export type ProviderSettingsService = ReturnType<typeof createProviderSettingsService>;
