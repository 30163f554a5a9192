import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { ApiError } from './api';
import { keyOf } from './queries';

/** A failure in words; a validation problem names its fields. */
function describe(failure: unknown): string {
  if (failure instanceof ApiError && failure.fields.length > 0) {
    return `${failure.message} ${failure.fields.map((f) => `${f.pointer ?? ''} ${f.message}`.trim()).join('; ')}`;
  }
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * Runs writes with a busy flag and a readable error. After a write succeeds, the cached queries under each of
 * `invalidates` (API paths, e.g. '/leads') are refetched before `run` returns, so lists show the change.
 */
export function useAction(...invalidates: string[]) {
  const client = useQueryClient();
  const [localError, setError] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: (action: () => Promise<unknown>) => action(),
    onSuccess: () => Promise.all(invalidates.map((path) => client.invalidateQueries({ queryKey: keyOf(path) }))),
  });
  async function run<T>(action: () => Promise<T>): Promise<T | undefined> {
    setError(null);
    try {
      return (await mutation.mutateAsync(action)) as T;
    } catch {
      return undefined; // shown through `error`
    }
  }
  const error = localError ?? (mutation.error ? describe(mutation.error) : null);
  return { busy: mutation.isPending, error, run, setError };
}

/** An error line announced to screen readers. */
export function ErrorText({ error }: { error: string | Error | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {typeof error === 'string' ? error : error.message}
    </p>
  );
}

/** A page heading with optional actions on the right. */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children ? <div className="actions">{children}</div> : null}
    </header>
  );
}

/** Copies text to the clipboard and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard API unavailable (http, old browser): select-and-copy fallback.
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  }
  return (
    <button type="button" className="secondary" onClick={copy}>
      {copied ? 'Copied' : label}
      <span className="sr-only" aria-live="polite">
        {copied ? ' to clipboard' : ''}
      </span>
    </button>
  );
}

/** A status pill. */
export function Badge({ value }: { value: string }) {
  return <span className={`badge badge-${value}`}>{value}</span>;
}

/** A set of checkboxes, one per option, whose checked options are `chosen`. */
export function Choices({ options, chosen, onChange }: { options: readonly string[]; chosen: string[]; onChange: (chosen: string[]) => void }) {
  return (
    <div className="scopes">
      {options.map((option) => (
        <label key={option} className="inline">
          <input type="checkbox" checked={chosen.includes(option)} onChange={(e) => onChange(e.target.checked ? [...chosen, option] : chosen.filter((c) => c !== option))} />
          {option}
        </label>
      ))}
    </div>
  );
}

/** A secret shown this once (an API key, a webhook signing secret), with a copy button. */
export function SecretOnce({ title, secret, testId, note, onDone }: { title: string; secret: string; testId: string; note?: string; onDone: () => void }) {
  return (
    <div className="card secret stack" role="status">
      <h2>{title}</h2>
      <p>
        Copy it now: it is shown this once and cannot be shown again.{note ? ` ${note}` : ''}
      </p>
      <div className="row">
        <code data-testid={testId} className="secret-value">{secret}</code>
        <CopyButton text={secret} />
      </div>
      <div>
        <button type="button" className="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

/**
 * A wide table that scrolls sideways inside itself on a narrow screen instead of widening the page;
 * focusable and named, so keyboard users can scroll it too.
 */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
