import { useApi } from '../queries';
import type { ActiveProvider as ActiveProviderView, ProviderModels } from '../types';

/**
 * An agent's model: a select of the active provider's models plus "service default" (null), or a text
 * field when the provider's list cannot be fetched. A saved model the provider does not list stays offered.
 */
export function ModelField({ value, onChange }: { value: string | null; onChange: (model: string | null) => void }) {
  const models = useApi<ProviderModels>('/provider/models');
  const list = models.data?.data ?? [];
  if (models.isPending) {
    return (
      <label>
        Model
        <select disabled value="">
          <option value="">Loading the provider&apos;s models…</option>
        </select>
      </label>
    );
  }
  if (models.error || list.length === 0) {
    return (
      <label>
        Model
        <input value={value ?? ''} placeholder={`Service default${models.data ? ` (${models.data.default_model})` : ''}`} onChange={(e) => onChange(e.target.value.trim() === '' ? null : e.target.value)} />
        <span className="hint">
          The provider&apos;s models could not be listed{models.data?.error ? `: ${models.data.error}` : models.error ? `: ${models.error.message}` : ''}. Type a model name, or leave it empty for the service default.
        </span>
      </label>
    );
  }
  const options = value !== null && !list.includes(value) ? [value, ...list] : list;
  return (
    <label>
      Model
      <select value={value ?? ''} onChange={(e) => onChange(e.target.value === '' ? null : e.target.value)}>
        <option value="">Service default ({models.data!.default_model})</option>
        {options.map((model) => (
          <option key={model} value={model}>
            {model}
            {list.includes(model) ? '' : ' (not offered by the provider)'}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Describes where the provider in effect comes from, in words. */
export function providerSourceText(active: ActiveProviderView): string {
  if (active.source === 'environment') return 'Set by environment variables on this server';
  if (active.source === 'dashboard') return 'Chosen in Settings → Model provider';
  return 'The default: no provider has been chosen';
}

/** One line for the agent page: "Answers with: OpenAI-compatible · gpt-4o-mini". */
export function ActiveProvider() {
  const active = useApi<ActiveProviderView>('/provider');
  if (!active.data) return null;
  const { label, model, provider } = active.data;
  return (
    <p className="hint" data-testid="active-provider" title={providerSourceText(active.data)}>
      Answers with: <strong>{label}</strong>
      {provider === 'builtin' ? '' : ` · ${model}`}
      {active.data.source === 'environment' ? ' (set by environment variables on this server)' : ''}
    </p>
  );
}
