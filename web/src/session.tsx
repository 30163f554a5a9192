import { createContext, useContext } from 'react';

/** The signed-in user, the current workspace and the others they can switch to. */
export interface Session {
  user: { id: string; email: string };
  workspace: { id: string; name: string; role: 'owner' | 'admin' | 'member' };
  workspaces: { id: string; name: string; role: string }[];
  csrf_token: string;
  public_url: string;
}

/** The session, and a way to reload it (after sign-in, switching, sign-out). */
export const SessionContext = createContext<{ session: Session; reload: () => Promise<void> } | null>(null);

/** The current session (inside the signed-in layout). */
export function useSession() {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside a session');
  return value;
}

/** True when the role may manage keys, members and the audit log. */
export function isAdmin(session: Session): boolean {
  return session.workspace.role === 'owner' || session.workspace.role === 'admin';
}
