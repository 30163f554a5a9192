import { useState, type FormEvent } from 'react';
import { api } from '../api';
import { useSession } from '../session';
import { useApi } from '../queries';
import { ErrorText, PageHeader, useAction } from '../ui';
import { PASSWORD_HINT } from './Auth';
import { SettingsNav } from './Settings';

// Dashboard-only (src/dashboard/routes/notifications.ts): a member's own settings are not in the /api/v1 document.
type Notifications = { notify_new_lead: boolean; notify_handoff: boolean; mail_enabled: boolean };

/** What the member is emailed about in this workspace; says so when the instance sends no mail. */
function EmailNotifications() {
  const loaded = useApi<Notifications>('/account/notifications');
  const action = useAction('/account/notifications');
  const current = loaded.data;
  async function toggle(change: Partial<Notifications>) {
    await action.run(() => api<Notifications>('PATCH', '/account/notifications', change));
  }
  return (
    <section className="card stack" aria-label="Email notifications">
      <h2>Email notifications</h2>
      {loaded.error ? <ErrorText error={loaded.error} /> : null}
      {current && !current.mail_enabled ? (
        <p className="notice" role="status">
          Email is off on this instance (SMTP_URL is not set): nothing is emailed until the person who runs it configures a mail server. Your choices are kept.
        </p>
      ) : null}
      {current ? (
        <>
          <label className="inline">
            <input type="checkbox" checked={current.notify_new_lead} disabled={action.busy} onChange={(e) => void toggle({ notify_new_lead: e.target.checked })} />
            Email me about new leads
          </label>
          <label className="inline">
            <input type="checkbox" checked={current.notify_handoff} disabled={action.busy} onChange={(e) => void toggle({ notify_handoff: e.target.checked })} />
            Email me when a visitor asks for a person
          </label>
          <span className="hint">For this workspace only.</span>
        </>
      ) : null}
      <ErrorText error={action.error} />
    </section>
  );
}

/** Settings → Account: the signed-in user changes their password (their other sessions end) and chooses their email notifications. */
export function Account() {
  const { session } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction();

  async function change(event: FormEvent) {
    event.preventDefault();
    setDone(false);
    const changed = await action.run(async () => {
      await api('POST', '/account/password', { current_password: current, new_password: next });
      return true;
    });
    if (changed) {
      setCurrent('');
      setNext('');
      setDone(true);
    }
  }

  return (
    <>
      <PageHeader title="Account" />
      <SettingsNav />
      <p>Signed in as <strong>{session.user.email}</strong>.</p>
      <form className="card stack" aria-label="Change password" onSubmit={change}>
        <h2>Change password</h2>
        <label>
          Current password
          <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <label>
          New password
          <input type="password" autoComplete="new-password" required minLength={10} aria-describedby="new-password-hint" value={next} onChange={(e) => setNext(e.target.value)} />
        </label>
        <span id="new-password-hint" className="hint under">{PASSWORD_HINT} Your other sessions (other browsers and devices) are signed out.</span>
        <ErrorText error={action.error} />
        {done ? <p role="status">Password changed. Other sessions were signed out.</p> : null}
        <div>
          <button type="submit" disabled={action.busy}>
            Change password
          </button>
        </div>
      </form>
      <EmailNotifications />
    </>
  );
}
