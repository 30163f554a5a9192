import { useState, type FormEvent } from 'react';
import { api } from '../api';
import { useSession } from '../session';
import { ErrorText, PageHeader, useAction } from '../ui';
import { PASSWORD_HINT } from './Auth';
import { SettingsNav } from './Settings';

/** Settings → Account: the signed-in user changes their password (their other sessions end). */
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
    </>
  );
}
