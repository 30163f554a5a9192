import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, ApiError, when } from '../api';
import type { ActiveProvider as ActiveProviderView, ProviderSettingsView } from '../types';
import { keyOf } from '../queries';
import { ErrorText, PageHeader, useAction } from '../ui';
import { ActiveProvider, providerSourceText } from './ModelPicker';
import { SettingsNav } from './Settings';

type Provider = ActiveProviderView['provider'];

const PROVIDERS: { value: Provider; label: string; hint: string }[] = [
  { value: 'builtin', label: 'Built-in', hint: 'No model and no network: answers with passages of the agent\'s knowledge.' },
  { value: 'openai', label: 'OpenAI-compatible', hint: 'OpenAI, or any server with the same API: Ollama, vLLM, LM Studio, llama.cpp …' },
  { value: 'anthropic', label: 'Anthropic', hint: 'Claude models through Anthropic\'s Messages API.' },
];

const BASE_URL_PLACEHOLDERS: Record<Provider, string> = { builtin: '', openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com/v1' };
const MODEL_PLACEHOLDERS: Record<Provider, string> = { builtin: '', openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' };

interface TestResult {
  ok: boolean;
  message: string;
  models: string[] | null;
}

/** Which provider answers now, and where that comes from. */
function ActiveCard({ settings }: { settings: ProviderSettingsView }) {
  const { active } = settings;
  return (
    <section className="card" aria-label="Active provider">
      <h2>Answering now</h2>
      <p data-testid="active-provider-summary">
        <strong>{active.label}</strong>
        {active.provider === 'builtin' ? '' : ` · ${active.model}`}
        {active.base_url ? <> · <code>{active.base_url}</code></> : null}
      </p>
      <p className={active.source === 'environment' ? 'notice' : 'hint'} role={active.source === 'environment' ? 'status' : undefined}>
        {providerSourceText(active)}
        {active.source === 'environment' ? ` (${settings.environment_variables.join(', ')}). They take precedence: unset them and restart to choose the provider here.` : ''}
        {active.source === 'dashboard' && settings.saved ? `, ${when(settings.saved.updated_at)}.` : '.'}
      </p>
      {settings.problem ? <p className="error" role="alert">{settings.problem}</p> : null}
    </section>
  );
}

/** The form: provider, base URL, model, API key; test connection and save. */
function ProviderForm({ settings }: { settings: ProviderSettingsView }) {
  const saved = settings.saved;
  const [provider, setProvider] = useState<Provider>(saved?.provider ?? settings.active.provider);
  const [baseUrl, setBaseUrl] = useState(saved?.base_url ?? '');
  const [model, setModel] = useState(saved?.model ?? '');
  const [apiKey, setApiKey] = useState('');
  const [removeKey, setRemoveKey] = useState(false);
  const [test, setTest] = useState<TestResult | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // A save refetches every provider query: these settings, the active provider and its models.
  const saving = useAction('/provider');
  const testing = useAction();
  const id = useId();
  const keySaved = saved !== null && saved.provider === provider && saved.api_key_set;

  useEffect(() => setTest(null), [provider, baseUrl, apiKey]);

  function body() {
    if (provider === 'builtin') return { provider };
    return {
      provider,
      base_url: baseUrl.trim() || null,
      model: model.trim() || null,
      // Empty: keep the saved key (the server never sends it back).
      ...(apiKey.trim() ? { api_key: apiKey.trim() } : removeKey ? { api_key: null } : {}),
    };
  }

  async function runTest() {
    setNotice(null);
    const result = await testing.run(() => api<TestResult>('POST', '/provider/test', body()));
    if (result) setTest(result);
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setNotice(null);
    const next = await saving.run(() => api<ProviderSettingsView>('PUT', '/provider/settings', body()));
    if (next) {
      setApiKey('');
      setRemoveKey(false);
      setNotice(`Saved. Agents now answer with ${next.active.label}${next.active.provider === 'builtin' ? '' : ` · ${next.active.model}`}.`);
    }
  }

  return (
    <form className="card stack" onSubmit={submit} aria-label="Model provider settings">
      <h2>Choose the provider</h2>
      <label>
        Provider
        <select value={provider} disabled={!settings.editable} aria-describedby={`${id}-provider`} onChange={(e) => setProvider(e.target.value as Provider)}>
          {PROVIDERS.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </label>
      <p id={`${id}-provider`} className="hint under">{PROVIDERS.find((option) => option.value === provider)!.hint}</p>
      {provider !== 'builtin' ? (
        <fieldset disabled={!settings.editable} className="stack">
          <legend>Connection</legend>
          <label>
            Base URL
            <input type="url" value={baseUrl} aria-describedby={`${id}-url`} placeholder={BASE_URL_PLACEHOLDERS[provider]} onChange={(e) => setBaseUrl(e.target.value)} />
          </label>
          <p id={`${id}-url`} className="hint under">Leave empty for {provider === 'anthropic' ? 'Anthropic' : 'OpenAI'} itself. A local server: e.g. http://localhost:11434/v1 (Ollama).</p>
          <label>
            Default model
            <input value={model} list={`${id}-models`} aria-describedby={`${id}-model`} placeholder={MODEL_PLACEHOLDERS[provider]} onChange={(e) => setModel(e.target.value)} />
            <datalist id={`${id}-models`}>
              {(test?.models ?? []).map((model) => <option key={model} value={model} />)}
            </datalist>
          </label>
          <p id={`${id}-model`} className="hint under">Used by agents that do not choose their own. Test the connection to list the provider&apos;s models.</p>
          <label>
            API key
            <input type="password" autoComplete="off" value={apiKey} aria-describedby={`${id}-key`} disabled={!settings.can_store_api_key} placeholder={keySaved ? `Saved key ending in ${saved.api_key_last4 ?? '••••'}; leave empty to keep it` : provider === 'openai' ? 'Optional for local servers' : 'Required'} onChange={(e) => setApiKey(e.target.value)} />
          </label>
          <p id={`${id}-key`} className="hint under">
            {settings.can_store_api_key
              ? 'Stored encrypted on the server and never shown again.'
              : 'This server cannot store API keys: set SECRET_KEY on every instance to save a provider API key.'}
          </p>
          {keySaved ? (
            <label className="inline">
              <input type="checkbox" checked={removeKey} onChange={(e) => setRemoveKey(e.target.checked)} />
              Remove the saved key
            </label>
          ) : null}
        </fieldset>
      ) : null}
      {test ? (
        <p className={test.ok ? 'notice' : 'error'} role={test.ok ? 'status' : 'alert'} data-testid="connection-result">
          {test.ok ? 'Connection OK. ' : 'Connection failed. '}
          {test.message}
        </p>
      ) : null}
      {notice ? <p className="notice" role="status">{notice}</p> : null}
      <ErrorText error={saving.error ?? testing.error} />
      <div className="row">
        <button type="button" className="secondary" disabled={testing.busy || !settings.editable} onClick={() => void runTest()}>
          {testing.busy ? 'Testing…' : 'Test connection'}
        </button>
        <button type="submit" disabled={saving.busy || !settings.editable}>
          Save
        </button>
      </div>
    </form>
  );
}

/** Settings → Model provider: the instance owner's choice of provider, and which one answers now. */
export function ProviderSettings() {
  // null: signed in, but not the instance's owner (403 not_instance_owner).
  const settings = useQuery({
    queryKey: keyOf('/provider/settings'),
    queryFn: async () => {
      try {
        return await api<ProviderSettingsView>('GET', '/provider/settings');
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_instance_owner') return null;
        throw error;
      }
    },
  });
  const shown = settings.data ?? undefined;
  const notOwner = settings.data === null;
  return (
    <>
      <PageHeader title="Model provider" />
      <SettingsNav />
      {notOwner ? (
        <>
          <p className="notice" role="status">Only the owner of this instance (the first account created on it) can change the model provider.</p>
          <ActiveProvider />
        </>
      ) : (
        <ErrorText error={settings.error} />
      )}
      {shown ? (
        <>
          <ActiveCard settings={shown} />
          {shown.editable ? null : <p className="notice">Set by environment variables on this server: this form is read-only.</p>}
          <ProviderForm settings={shown} />
        </>
      ) : null}
    </>
  );
}
