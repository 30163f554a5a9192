import { useQueryClient } from '@tanstack/react-query';
import { Fragment, useCallback, useEffect, useRef, useState, type ReactElement } from 'react';
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
import { NotFound } from './pages/NotFound';
import { sectionOf, SECTIONS } from './pages/agent/draft';
import { ProviderSettings } from './pages/ProviderSettings';
import { Settings } from './pages/Settings';
import { Webhooks } from './pages/Webhooks';
import { disconnectLive, useUnread } from './live';
import { useApi } from './queries';
import { Link, navigate, useHash, usePath } from './router';
import { SessionContext, type Session } from './session';
import type { Agent } from './types';

const PUBLIC_PATHS = ['/signin', '/signup'];

const SETTINGS: Record<string, [string, ReactElement]> = {
  developers: ['Developers', <Developers />],
  webhooks: ['Webhooks', <Webhooks />],
  members: ['Members', <Members />],
  audit: ['Audit log', <AuditLog />],
  account: ['Account', <Account />],
  provider: ['Model provider', <ProviderSettings />],
};

/** The page at a signed-in path, and the words that name it in the window title. */
function route(path: string, hash: string): { title: string; agentId?: string; page: ReactElement } {
  const [, section = '', id, extra] = path.replace(/(.)\/$/, '$1').split('/');
  const notFound = { title: 'Page not found', page: <NotFound /> };
  if (extra !== undefined) return notFound;
  switch (section) {
    case '':
      return id === undefined ? { title: 'Home', page: <Home /> } : notFound;
    case 'agents':
      return id ? { title: SECTIONS.find(([s]) => s === sectionOf(hash))![1], agentId: id, page: <AgentEditor id={id} /> } : { title: 'Agents', page: <Agents /> };
    case 'conversations':
      return id ? { title: 'Conversation', page: <ConversationDetail id={id} /> } : { title: 'Conversations', page: <Conversations /> };
    case 'leads':
      return id === undefined ? { title: 'Leads', page: <Leads /> } : notFound;
    case 'analytics':
      return id === undefined ? { title: 'Analytics', page: <Analytics /> } : notFound;
    case 'settings': {
      if (id === undefined) return { title: 'Settings', page: <Settings /> };
      const sub = SETTINGS[id];
      return sub ? { title: `${sub[0]} · Settings`, page: sub[1] } : notFound;
    }
    default:
      return notFound;
  }
}

const SIGNED_OUT_TITLES: Record<string, string> = { '/signup': 'Create account', '/invite': 'Invitation', '/forgot-password': 'Forgot password', '/reset-password': 'New password' };

/** Names the page in the window title: "Page · Workspace · Chat agents". */
function useDocumentTitle(page: string | null, workspace?: string) {
  useEffect(() => {
    if (page === null) return;
    document.title = [page, workspace, 'Chat agents'].filter(Boolean).join(' · ');
  }, [page, workspace]);
}

/** How many conversations got visitor messages since they were last opened (live). */
function UnreadCount() {
  const count = useUnread().size;
  return count > 0 ? <span className="count" aria-label={`${count} with new messages`}>{count}</span> : null;
}

function Shell({ session, reload }: { session: Session; reload: () => Promise<void> }) {
  const path = usePath();
  const current = route(path, useHash());
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  // An agent's page names the agent (read from the cache the editor fills: no second request).
  const agent = useApi<Agent>(`/chatbots/${current.agentId ?? ''}`, { enabled: current.agentId !== undefined });
  const agentName = current.agentId === undefined ? null : agent.data?.id === current.agentId ? agent.data.name : 'Agent';
  useDocumentTitle([current.title, agentName].filter(Boolean).join(' · '), session.workspace.name);
  // A page chosen from the menu closes it (on a phone it covers the page).
  useEffect(() => setMenuOpen(false), [path]);
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
      <aside className={`sidebar${menuOpen ? ' open' : ''}`}>
        <div className="topbar">
          <div className="brand" aria-hidden="true">◆ Agents</div>
          <button ref={menuButton} type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="sidebar-menu" onClick={() => setMenuOpen(!menuOpen)}>
            <span aria-hidden="true">{menuOpen ? '✕' : '☰'}</span> Menu
          </button>
        </div>
        <div id="sidebar-menu" className="menu" onKeyDown={(e) => {
            // Escape closes the phone menu and gives the focus back to its button.
            if (e.key !== 'Escape' || !menuOpen) return;
            setMenuOpen(false);
            menuButton.current?.focus();
          }}>
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
        </div>
      </aside>
      <main id="main" tabIndex={-1}>
        <Fragment key={`${session.workspace.id}${path}`}>{current.page}</Fragment>
      </main>
    </div>
  );
}

/** The dashboard: the signed-out pages, or the signed-in shell around the current page. */
export function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const queryClient = useQueryClient();
  // Whose cached answers the query cache holds: "user workspace", or null signed out.
  const cacheOwner = useRef<string | null | undefined>(undefined);
  const reload = useCallback(async () => {
    let value: Session | null;
    try {
      value = await api<Session>('GET', '/session');
      setCsrfToken(value.csrf_token);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) throw error;
      value = null;
    }
    // Another user or workspace (switching, signing out, an accepted invitation) must not see the last one's data.
    const owner = value && `${value.user.id} ${value.workspace.id}`;
    if (cacheOwner.current !== undefined && cacheOwner.current !== owner) queryClient.clear();
    cacheOwner.current = owner;
    setSession(value);
  }, [queryClient]);
  useEffect(() => {
    void reload();
  }, [reload]);
  // Signed in, the shell names the page; before that (and on the pages open to everyone) this does.
  useDocumentTitle(SIGNED_OUT_TITLES[path] ?? (session === null ? 'Sign in' : session === undefined ? 'Loading' : null));

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
