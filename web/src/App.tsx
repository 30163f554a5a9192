import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, setCsrfToken } from './api';
import { Account } from './pages/Account';
import { AgentEditor } from './pages/AgentEditor';
import { Agents } from './pages/Agents';
import { Analytics } from './pages/Analytics';
import { AuditLog } from './pages/AuditLog';
import { ForgotPassword, Invite, nextPath, ResetPassword, SignIn, SignUp } from './pages/Auth';
import { ConversationDetail, Conversations } from './pages/Conversations';
import { Developers } from './pages/Developers';
import { Home } from './pages/Home';
import { Leads } from './pages/Leads';
import { Members } from './pages/Members';
import { Settings } from './pages/Settings';
import { Webhooks } from './pages/Webhooks';
import { disconnectLive, useUnread } from './live';
import { Link, navigate, usePath } from './router';
import { SessionContext, type Session } from './session';

const PUBLIC_PATHS = ['/signin', '/signup'];

function Page({ path }: { path: string }) {
  const [, section, id] = path.split('/');
  switch (section) {
    case '':
    case undefined:
      return <Home />;
    case 'agents':
      return id ? <AgentEditor id={id} /> : <Agents />;
    case 'conversations':
      return id ? <ConversationDetail id={id} /> : <Conversations />;
    case 'leads':
      return <Leads />;
    case 'analytics':
      return <Analytics />;
    case 'settings':
      if (id === 'developers') return <Developers />;
      if (id === 'webhooks') return <Webhooks />;
      if (id === 'members') return <Members />;
      if (id === 'audit') return <AuditLog />;
      if (id === 'account') return <Account />;
      return <Settings />;
    default:
      return <p>Page not found. <Link to="/">Go home</Link></p>;
  }
}

/** How many conversations got visitor messages since they were last opened (live). */
function UnreadCount() {
  const count = useUnread().size;
  return count > 0 ? <span className="count" aria-label={`${count} with new messages`}>{count}</span> : null;
}

function Shell({ session, reload }: { session: Session; reload: () => Promise<void> }) {
  const path = usePath();
  async function switchTo(workspaceId: string) {
    await api('POST', '/session/workspace', { workspace_id: workspaceId });
    disconnectLive();
    await reload();
    navigate('/');
  }
  async function signOut() {
    await api('POST', '/signout');
    disconnectLive();
    await reload();
    navigate('/signin');
  }
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <aside className="sidebar">
        <div className="brand" aria-hidden="true">◆ Agents</div>
        {session.workspaces.length > 1 ? (
          <label className="switcher">
            Workspace
            <select value={session.workspace.id} onChange={(e) => void switchTo(e.target.value)}>
              {session.workspaces.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <p className="workspace-name">{session.workspace.name}</p>
        )}
        <nav aria-label="Main">
          <ul>
            <li><Link to="/">Home</Link></li>
            <li><Link to="/agents">Agents</Link></li>
            <li>
              <Link to="/conversations">
                Conversations
                <UnreadCount />
              </Link>
            </li>
            <li><Link to="/leads">Leads</Link></li>
            <li><Link to="/analytics">Analytics</Link></li>
            <li><Link to="/settings">Settings</Link></li>
          </ul>
        </nav>
        <div className="account">
          <span className="email">{session.user.email}</span>
          <span className="role">{session.workspace.role}</span>
          <button type="button" className="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </aside>
      <main id="main" tabIndex={-1}>
        <Page path={path} key={`${session.workspace.id}${path}`} />
      </main>
    </div>
  );
}

/** The dashboard: the signed-out pages, or the signed-in shell around the current page. */
export function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const reload = useCallback(async () => {
    try {
      const value = await api<Session>('GET', '/session');
      setCsrfToken(value.csrf_token);
      setSession(value);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) setSession(null);
      else throw error;
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  useEffect(() => {
    const titles: Record<string, string> = { signin: 'Sign in', signup: 'Create account', agents: 'Agents', conversations: 'Conversations', leads: 'Leads', analytics: 'Analytics', settings: 'Settings', invite: 'Invitation', 'forgot-password': 'Forgot password', 'reset-password': 'New password' };
    document.title = `${titles[path.split('/')[1] ?? ''] ?? 'Home'} · Agents dashboard`;
  }, [path]);

  if (session === undefined) return <p className="loading">Loading…</p>;
  if (path === '/invite') return <Invite token={window.location.hash.slice(1)} session={session} onSignedIn={reload} />;
  if (path === '/forgot-password') return <ForgotPassword />;
  if (path === '/reset-password') return <ResetPassword onChanged={reload} />;
  if (!session) {
    if (path === '/signup') return <SignUp onSignedIn={reload} />;
    if (path !== '/signin') queueMicrotask(() => navigate(path === '/' ? '/signin' : `/signin?next=${encodeURIComponent(path)}`, true));
    return <SignIn onSignedIn={reload} />;
  }
  if (PUBLIC_PATHS.includes(path)) queueMicrotask(() => navigate(nextPath(), true));
  return (
    <SessionContext.Provider value={{ session, reload }}>
      <Shell session={session} reload={reload} />
    </SessionContext.Provider>
  );
}
