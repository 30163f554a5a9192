import { useState, type FormEvent } from 'react';
import { api, when } from '../api';
import { isAdmin, useSession } from '../session';
import { useApi } from '../queries';
import { Choices, ErrorText, PageHeader, SecretOnce, useAction } from '../ui';
import { AdminOnly, SettingsNav } from './Settings';

const SCOPES = ['analytics:read', 'chatbots:read', 'chatbots:write', 'conversations:read', 'events:read', 'messages:write', 'leads:read', 'leads:write', 'webhooks:read', 'webhooks:write'];

// Dashboard-only (src/dashboard/routes/settings.ts): keys are managed here, not through the /api/v1 document.
interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_by: string | null;
  created_by_name: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

function CreateKeyForm({ onCreated, onCancel }: { onCreated: (key: ApiKey & { secret: string }) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expiry, setExpiry] = useState('');
  const { busy, error, run, setError } = useAction('/api-keys');
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (scopes.length === 0) return setError('Choose at least one scope.');
    const created = await run(() => api<ApiKey & { secret: string }>('POST', '/api-keys', { name, scopes, expires_in_days: expiry ? Number(expiry) : null }));
    if (created) onCreated(created);
  }
  return (
    <form className="card stack" onSubmit={submit} aria-label="Create API key">
      <h2>New API key</h2>
      <label>
        Name
        <input required maxLength={100} autoFocus placeholder="e.g. CRM sync" value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        <Choices options={SCOPES} chosen={scopes} onChange={setScopes} />
      </fieldset>
      <label>
        Expiry
        <select value={expiry} onChange={(e) => setExpiry(e.target.value)}>
          <option value="">Never</option>
          <option value="30">In 30 days</option>
          <option value="90">In 90 days</option>
          <option value="365">In 1 year</option>
        </select>
      </label>
      <ErrorText error={error} />
      <div className="row">
        <button type="submit" disabled={busy}>
          Create key
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Settings → Developers: API keys (created with scopes, shown once, revoked with confirmation). */
export function Developers() {
  const { session } = useSession();
  const admin = isAdmin(session);
  const keys = useApi<{ data: ApiKey[] }>('/api-keys', { enabled: admin });
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<(ApiKey & { secret: string }) | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revoke = useAction('/api-keys');

  async function confirmRevoke() {
    const key = revoking!;
    if (await revoke.run(() => api('POST', `/api-keys/${key.id}/revoke`))) setRevoking(null);
  }

  return (
    <>
      <PageHeader title="Developers">
        {admin && !creating ? (
          <button type="button" onClick={() => { setCreated(null); setCreating(true); }}>
            Create API key
          </button>
        ) : null}
      </PageHeader>
      <SettingsNav />
      <p>
        API keys let your own systems use the public API. Read the <a href="/docs">API reference</a> (also as an{' '}
        <a href="/api/v1/openapi">OpenAPI document</a>). Send a key as <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
      {!admin ? <AdminOnly /> : null}
      {admin && creating ? (
        <CreateKeyForm
          onCancel={() => setCreating(false)}
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
          }}
        />
      ) : null}
      {created ? (
        <SecretOnce title={`Your new key “${created.name}”`} secret={created.secret} testId="api-key-secret" onDone={() => setCreated(null)} />
      ) : null}
      {revoking ? (
        <div className="card confirm" role="alertdialog" aria-labelledby="revoke-text">
          <p id="revoke-text">
            Revoke “{revoking.name}” ({revoking.prefix}…)? Anything using it stops working immediately. This cannot be undone.
          </p>
          <ErrorText error={revoke.error} />
          <div className="row">
            <button type="button" className="danger" disabled={revoke.busy} onClick={() => void confirmRevoke()}>
              Confirm revoke
            </button>
            <button type="button" className="secondary" autoFocus onClick={() => setRevoking(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      <ErrorText error={keys.error} />
      {admin && keys.data ? (
        keys.data.data.length === 0 ? (
          <p className="empty">No API keys yet.</p>
        ) : (
          <table>
            <caption className="sr-only">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created by</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((key) => (
                <tr key={key.id} className={key.revoked_at ? 'revoked' : ''}>
                  <td>{key.name}</td>
                  <td><code>{key.prefix}…</code></td>
                  <td className="scope-list">{key.scopes.join(', ')}</td>
                  <td>{key.created_by_name ?? key.created_by ?? '—'}</td>
                  <td>{when(key.created_at)}</td>
                  <td>{when(key.last_used_at)}</td>
                  <td>{key.expires_at ? when(key.expires_at) : 'Never'}</td>
                  <td>
                    {key.revoked_at ? (
                      <span className="badge badge-revoked">revoked</span>
                    ) : (
                      <button type="button" className="danger small" onClick={() => setRevoking(key)}>
                        Revoke<span className="sr-only"> {key.name}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </>
  );
}
