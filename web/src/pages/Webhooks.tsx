import { useState, type FormEvent } from 'react';
import { api, when } from '../api';
import { isAdmin, useSession } from '../session';
import { useApi } from '../queries';
import type { WebhookDelivery as Delivery, WebhookDeliveryList, WebhookEndpoint as Endpoint, WebhookEndpointList } from '../types';
import { Badge, Choices, ErrorText, PageHeader, SecretOnce, useAction } from '../ui';
import { AdminOnly, SettingsNav } from './Settings';

const EVENT_TYPES = ['conversation.created', 'conversation.updated', 'message.created', 'lead.created', 'lead.updated', 'chatbot.created', 'chatbot.updated', 'source.synced'];

/** Add or edit: the receiver's URL, the events it gets (all, or chosen ones), a description. */
function EndpointForm({ endpoint, onSaved, onCancel }: { endpoint?: Endpoint; onSaved: (saved: Endpoint) => void; onCancel: () => void }) {
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [all, setAll] = useState(!endpoint || endpoint.events.includes('*'));
  const [events, setEvents] = useState<string[]>(endpoint && !endpoint.events.includes('*') ? endpoint.events : []);
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const { busy, error, run, setError } = useAction('/webhook-endpoints');
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!all && events.length === 0) return setError('Choose at least one event, or all events.');
    const body = { url, events: all ? ['*'] : events, description: description || null };
    const saved = await run(() => (endpoint ? api<Endpoint>('PATCH', `/webhook-endpoints/${endpoint.id}`, body) : api<Endpoint>('POST', '/webhook-endpoints', body)));
    if (saved) onSaved(saved);
  }
  return (
    <form className="card stack" onSubmit={submit} aria-label={endpoint ? 'Edit endpoint' : 'Add endpoint'}>
      <h2>{endpoint ? 'Edit endpoint' : 'New endpoint'}</h2>
      <label>
        Endpoint URL
        <input type="url" required autoFocus placeholder="https://example.com/webhooks" value={url} onChange={(e) => setUrl(e.target.value)} />
      </label>
      <fieldset>
        <legend>Events</legend>
        <label className="inline">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} />
          All events, including future ones
        </label>
        {!all ? (
          <Choices options={EVENT_TYPES} chosen={events} onChange={setEvents} />
        ) : null}
      </fieldset>
      <label>
        Description (optional)
        <input maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <ErrorText error={error} />
      <div className="row">
        <button type="submit" disabled={busy}>
          {endpoint ? 'Save endpoint' : 'Add endpoint'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The delivery log of one endpoint: each event sent, its attempts, and a resend. */
function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const log = useApi<WebhookDeliveryList>(`/webhook-endpoints/${endpoint.id}/deliveries?limit=50`);
  const resend = useAction(`/webhook-endpoints/${endpoint.id}/deliveries`);
  async function again(delivery: Delivery) {
    await resend.run(() => api('POST', `/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/resend`));
  }
  return (
    <section className="card stack" aria-label={`Deliveries to ${endpoint.url}`}>
      <div className="row spread">
        <h2>Deliveries</h2>
        <button type="button" className="secondary small" onClick={() => void log.refetch()}>
          Refresh
        </button>
      </div>
      <ErrorText error={log.error ?? resend.error} />
      {log.data && log.data.data.length === 0 ? <p className="empty">Nothing sent yet. Send a test event to try the endpoint.</p> : null}
      {log.data && log.data.data.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Response</th>
              <th scope="col">Attempts</th>
              <th scope="col">Next retry</th>
              <th scope="col">Created</th>
              <th scope="col"><span className="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {log.data.data.map((delivery) => {
              const last = delivery.attempt_log.at(-1);
              return (
                <tr key={delivery.id}>
                  <td><code>{delivery.event_type}</code></td>
                  <td><Badge value={delivery.status} /></td>
                  <td>
                    {last ? (
                      <details>
                        <summary>{last.status_code ?? 'no answer'} · {last.latency_ms} ms</summary>
                        <pre className="excerpt">{last.error ?? last.response_excerpt ?? '(empty body)'}</pre>
                      </details>
                    ) : '—'}
                  </td>
                  <td>{delivery.attempts}</td>
                  <td>{delivery.next_retry_at ? when(delivery.next_retry_at) : '—'}</td>
                  <td>{when(delivery.created_at)}</td>
                  <td>
                    <button type="button" className="secondary small" disabled={resend.busy || delivery.status === 'pending' || delivery.status === 'sending'} onClick={() => void again(delivery)}>
                      Resend<span className="sr-only"> {delivery.event_type}</span>
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

/** Why an endpoint is off, in words. */
function disabledText(endpoint: Endpoint): string {
  if (endpoint.disabled_reason === 'gone') return 'Disabled: the receiver answered 410 Gone.';
  if (endpoint.disabled_reason === 'failing') return 'Disabled: every delivery failed for days.';
  return 'Disabled.';
}

/** Settings → Webhooks: endpoints that receive the workspace's events, signed per Standard Webhooks. */
export function Webhooks() {
  const { session } = useSession();
  const admin = isAdmin(session);
  const list = useApi<WebhookEndpointList>('/webhook-endpoints', { enabled: admin });
  const [editing, setEditing] = useState<Endpoint | 'new' | null>(null);
  const [secret, setSecret] = useState<{ url: string; secret: string; rotated: boolean } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [removing, setRemoving] = useState<Endpoint | null>(null);
  // Every change to an endpoint, and a test event, refetch the endpoints and their open delivery logs.
  const action = useAction('/webhook-endpoints');
  const [tested, setTested] = useState<string | null>(null);

  async function change(run: () => Promise<unknown>) {
    await action.run(run);
  }
  async function rotate(endpoint: Endpoint) {
    const rotated = await action.run(() => api<Endpoint>('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`));
    if (rotated?.secret) setSecret({ url: rotated.url, secret: rotated.secret, rotated: true });
  }
  async function test(endpoint: Endpoint) {
    if (await action.run(() => api('POST', `/webhook-endpoints/${endpoint.id}/test`))) {
      setTested(endpoint.id);
      setOpen(endpoint.id);
    }
  }

  return (
    <>
      <PageHeader title="Webhooks">
        {admin && !editing ? (
          <button type="button" onClick={() => { setSecret(null); setEditing('new'); }}>
            Add endpoint
          </button>
        ) : null}
      </PageHeader>
      <SettingsNav />
      <p>
        Webhooks POST the workspace&apos;s events (a new lead, a new conversation, …) to your systems as they happen, signed per{' '}
        <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>: check the <code>webhook-signature</code> header with the endpoint&apos;s secret.
        Failed deliveries are retried for about a day.
      </p>
      {!admin ? <AdminOnly /> : null}
      {admin && editing ? (
        <EndpointForm
          endpoint={editing === 'new' ? undefined : editing}
          onCancel={() => setEditing(null)}
          onSaved={(saved) => {
            setEditing(null);
            if (saved.secret) setSecret({ url: saved.url, secret: saved.secret, rotated: false });
          }}
        />
      ) : null}
      {secret ? (
        <SecretOnce
          title={`${secret.rotated ? 'The new signing secret' : 'Signing secret'} for ${secret.url}`}
          secret={secret.secret}
          testId="webhook-secret"
          note={secret.rotated ? 'The previous secret keeps signing beside it for 24 hours, so your receiver can switch without missing a delivery.' : undefined}
          onDone={() => setSecret(null)}
        />
      ) : null}
      {removing ? (
        <div className="card confirm" role="alertdialog" aria-labelledby="remove-text">
          <p id="remove-text">Delete the endpoint {removing.url}? It receives nothing more, and its delivery log is deleted.</p>
          <div className="row">
            <button type="button" className="danger" disabled={action.busy} onClick={() => void change(() => api('DELETE', `/webhook-endpoints/${removing.id}`)).then(() => setRemoving(null))}>
              Confirm delete
            </button>
            <button type="button" className="secondary" autoFocus onClick={() => setRemoving(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      <ErrorText error={list.error ?? action.error} />
      {admin && list.data && list.data.data.length === 0 && !editing ? <p className="empty">No endpoints yet.</p> : null}
      {admin
        ? (list.data?.data ?? []).map((endpoint) => (
            <article key={endpoint.id} className="card stack" aria-label={endpoint.url}>
              <div className="row spread">
                <h2 className="endpoint-url"><code>{endpoint.url}</code></h2>
                <Badge value={endpoint.enabled ? 'enabled' : 'disabled'} />
              </div>
              {endpoint.description ? <p>{endpoint.description}</p> : null}
              <p className="muted">
                Events: {endpoint.events.includes('*') ? 'all' : endpoint.events.join(', ')} · added {when(endpoint.created_at)}
                {endpoint.previous_secret_expires_at ? ` · previous secret valid until ${when(endpoint.previous_secret_expires_at)}` : ''}
              </p>
              {!endpoint.enabled ? <p className="notice">{disabledText(endpoint)}</p> : null}
              {endpoint.enabled && endpoint.failing_since ? <p className="notice">Failing since {when(endpoint.failing_since)}: deliveries are being retried.</p> : null}
              {tested === endpoint.id ? <p role="status">Test event queued: it appears in the deliveries below.</p> : null}
              <div className="row">
                <button type="button" className="secondary small" disabled={action.busy || !endpoint.enabled} onClick={() => void test(endpoint)}>
                  Send test event
                </button>
                <button type="button" className="secondary small" onClick={() => setOpen(open === endpoint.id ? null : endpoint.id)} aria-expanded={open === endpoint.id}>
                  Deliveries
                </button>
                <button type="button" className="secondary small" onClick={() => { setSecret(null); setEditing(endpoint); }}>
                  Edit
                </button>
                <button type="button" className="secondary small" disabled={action.busy} onClick={() => void change(() => api('PATCH', `/webhook-endpoints/${endpoint.id}`, { enabled: !endpoint.enabled }))}>
                  {endpoint.enabled ? 'Disable' : 'Enable'}
                </button>
                <button type="button" className="secondary small" disabled={action.busy} onClick={() => void rotate(endpoint)}>
                  Rotate secret
                </button>
                <button type="button" className="danger small" onClick={() => setRemoving(endpoint)}>
                  Delete<span className="sr-only"> {endpoint.url}</span>
                </button>
              </div>
              {open === endpoint.id ? <Deliveries endpoint={endpoint} /> : null}
            </article>
          ))
        : null}
    </>
  );
}
