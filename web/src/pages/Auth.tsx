import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { api, setCsrfToken } from '../api';
import { Link, navigate } from '../router';
import type { Session } from '../session';
import { useApi } from '../queries';
import { ErrorText, useAction } from '../ui';

type SignedIn = { csrf_token: string };

// Where to go after signing in: a dashboard path from ?next= (never another site), else home.
export function nextPath(): string {
  const next = new URLSearchParams(window.location.search).get('next') ?? '/';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth" id="main">
      <div className="auth-card">
        <p className="brand" aria-hidden="true">◆ Agents</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

/** Sign-in: Email, Password, "Sign in". */
export function SignIn({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await run(() => api<SignedIn>('POST', '/signin', { email, password }));
    if (!result) return;
    setCsrfToken(result.csrf_token);
    await onSignedIn();
    navigate(nextPath(), true);
  }
  return (
    <AuthCard title="Sign in">
      <form onSubmit={submit} className="stack">
        <label>
          Email
          <input type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <ErrorText error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p>
        <Link to="/forgot-password">Forgot your password?</Link>
      </p>
      <p>
        New here? <Link to="/signup">Create an account</Link>
      </p>
    </AuthCard>
  );
}

/** The password rule, as the server applies it (src/modules/users/password-policy.ts). */
export const PASSWORD_HINT = 'At least 10 characters, and not one of the most common passwords.';

/**
 * Sign-up: an account with its own workspace, when the instance allows it (SIGNUP, asked of the server), or
 * through an invitation. Email, Password, Workspace name, "Create account".
 */
export function SignUp({ onSignedIn, invitationToken, invitedEmail }: { onSignedIn: () => Promise<void>; invitationToken?: string; invitedEmail?: string | null }) {
  const [email, setEmail] = useState(invitedEmail ?? '');
  // Through an invitation, sign-up is open whatever the instance says.
  const status = useApi<{ open: boolean }>('/signup-status', { enabled: !invitationToken });
  const [password, setPassword] = useState('');
  const [workspaceName, setWorkspaceName] = useState('');
  const { busy, error, run } = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    const body = invitationToken ? { email, password, invitation_token: invitationToken } : { email, password, workspace_name: workspaceName };
    const result = await run(() => api<SignedIn>('POST', '/signup', body));
    if (!result) return;
    setCsrfToken(result.csrf_token);
    await onSignedIn();
    navigate('/', true);
  }
  const form = (
    <form onSubmit={submit} className="stack">
      <label>
        Email
        <input type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label>
        Password
        <input type="password" autoComplete="new-password" required minLength={10} aria-describedby="password-hint" value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      <span id="password-hint" className="hint under">{PASSWORD_HINT}</span>
      {invitationToken ? null : (
        <label>
          Workspace name
          <input type="text" required maxLength={200} placeholder="e.g. your company" value={workspaceName} onChange={(e) => setWorkspaceName(e.target.value)} />
        </label>
      )}
      <ErrorText error={error} />
      <button type="submit" disabled={busy}>
        Create account
      </button>
    </form>
  );
  if (invitationToken) return form;
  if (!status.data && !status.error) return <p className="loading">Loading…</p>;
  if (status.data && !status.data.open) {
    return (
      <AuthCard title="Create your account">
        <p className="notice" role="status">
          Sign-up is closed on this instance: new accounts join through invitation links. Ask an owner or admin of a workspace to invite you.
        </p>
        <p>
          Already have an account? <Link to="/signin">Sign in</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Create your account">
      <p className="lead">Run AI agents that talk to your website visitors. Your account creates a workspace you own.</p>
      {form}
      <p>
        Already have an account? <Link to="/signin">Sign in</Link>
      </p>
    </AuthCard>
  );
}

/** An invitation link: accept it signed in, or create an account through it. */
export function Invite({ token, session, onSignedIn }: { token: string; session: Session | null; onSignedIn: () => Promise<void> }) {
  // A lookup that changes nothing, though a POST (the token stays out of URLs and logs).
  const invitation = useQuery({
    queryKey: ['invitations', 'lookup', token],
    queryFn: () => api<{ workspace_name: string; role: string; email: string | null }>('POST', '/invitations/lookup', { token }),
  });
  const { busy, error, run } = useAction();
  async function accept() {
    if (await run(() => api('POST', '/invitations/accept', { token }))) {
      await onSignedIn();
      navigate('/', true);
    }
  }
  if (invitation.error) {
    return (
      <AuthCard title="Invitation">
        <ErrorText error={invitation.error} />
        <Link to="/">Go to the dashboard</Link>
      </AuthCard>
    );
  }
  if (!invitation.data) return <p className="loading">Loading…</p>;
  return (
    <AuthCard title={`Join ${invitation.data.workspace_name}`}>
      <p>
        You are invited as {invitation.data.role}
        {invitation.data.email ? <> (for {invitation.data.email} only)</> : null}.
      </p>
      {session ? (
        <>
          <p>Signed in as {session.user.email}.</p>
          <ErrorText error={error} />
          <button type="button" disabled={busy} onClick={() => void accept()}>
            Accept invitation
          </button>
        </>
      ) : (
        <>
          <SignUp onSignedIn={onSignedIn} invitationToken={token} invitedEmail={invitation.data.email} />
          <p>
            Have an account? <Link to={`/signin?next=${encodeURIComponent(`/invite#${token}`)}`}>Sign in to accept</Link>.
          </p>
        </>
      )}
    </AuthCard>
  );
}

/** Forgot password: Email, "Email me a link". The server answers the same for any address. */
export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const { busy, error, run } = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (await run(async () => (await api('POST', '/password/forgot', { email }), true))) setSent(true);
  }
  return (
    <AuthCard title="Forgot your password?">
      {sent ? (
        <p className="notice" role="status">
          If an account uses {email}, an email with a link to choose a new password is on its way. The link works once, for an hour. Nothing arrives? Check the
          address and your spam folder, or ask the person who runs this instance: email may be off here.
        </p>
      ) : (
        <form onSubmit={submit} className="stack">
          <p className="lead">Enter the email of your account and we will send you a link to choose a new password.</p>
          <label>
            Email
            <input type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <ErrorText error={error} />
          <button type="submit" disabled={busy}>
            Email me a link
          </button>
        </form>
      )}
      <p>
        <Link to="/signin">Back to sign in</Link>
      </p>
    </AuthCard>
  );
}

/** The emailed link (/reset-password?token=…): New password, "Set new password"; every session ends. */
export function ResetPassword({ onChanged }: { onChanged: () => Promise<void> }) {
  // Read once, then taken out of the address bar (and so of the history and any later Referer).
  const [token] = useState(() => new URLSearchParams(window.location.search).get('token') ?? '');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const { busy, error, run } = useAction();
  useEffect(() => {
    if (window.location.search) window.history.replaceState(null, '', '/reset-password');
  }, []);
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!(await run(async () => (await api('POST', '/password/reset', { token, password }), true)))) return;
    setDone(true);
    // The change ended every session, this browser's too.
    await onChanged();
  }
  if (done) {
    return (
      <AuthCard title="Password changed">
        <p role="status">Your new password is set, and every session of your account was signed out.</p>
        <p>
          <Link to="/signin">Sign in</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Choose a new password">
      {token ? (
        <form onSubmit={submit} className="stack">
          <label>
            New password
            <input type="password" autoComplete="new-password" required minLength={10} aria-describedby="password-hint" value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <span id="password-hint" className="hint under">{PASSWORD_HINT}</span>
          <ErrorText error={error} />
          <button type="submit" disabled={busy}>
            Set new password
          </button>
        </form>
      ) : (
        <p className="error" role="alert">
          This page needs the link from the email.
        </p>
      )}
      <p>
        <Link to="/forgot-password">Ask for a new link</Link>
      </p>
    </AuthCard>
  );
}
