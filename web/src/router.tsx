import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

const listeners = new Set<() => void>();
// One token per mounted page that has unsaved changes.
const unsaved = new Set<symbol>();

const UNSAVED = 'You have unsaved changes. Leave this page and lose them?';

/** Moves to a dashboard path without reloading the page (after asking, when a page has unsaved changes). */
export function navigate(path: string, replace = false): void {
  if (path !== window.location.pathname && unsaved.size > 0 && !window.confirm(UNSAVED)) return;
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  listeners.forEach((listener) => listener());
  window.scrollTo(0, 0);
}

/** The current path (re-renders on navigation and on back/forward). */
export function usePath(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** An in-app link: a real <a href> (keyboard, new tab) that navigates without a reload. */
export function Link({ to, ...props }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  const current = window.location.pathname === to || (to !== '/' && window.location.pathname.startsWith(`${to}/`));
  return <a href={to} onClick={onClick} aria-current={current ? 'page' : undefined} {...props} />;
}

/**
 * Warns before leaving while `dirty`: the browser's own prompt on reload, close or an outside link
 * (beforeunload), and a confirmation before moving elsewhere in the dashboard (navigate).
 */
export function useUnsavedChanges(dirty: boolean): void {
  useEffect(() => {
    if (!dirty) return;
    const token = Symbol('unsaved');
    const beforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers show the prompt only when returnValue is set.
      event.returnValue = '';
    };
    unsaved.add(token);
    window.addEventListener('beforeunload', beforeUnload);
    return () => {
      unsaved.delete(token);
      window.removeEventListener('beforeunload', beforeUnload);
    };
  }, [dirty]);
}

/** The `#fragment` of the current address, without the `#` (re-renders when it changes). */
export function useHash(): string {
  const [hash, setHash] = useState(window.location.hash.slice(1));
  useEffect(() => {
    const update = () => setHash(window.location.hash.slice(1));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return hash;
}
