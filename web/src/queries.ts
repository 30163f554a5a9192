import { keepPreviousData, QueryClient, useQuery, type QueryKey } from '@tanstack/react-query';
import { api, ApiError } from './api';

/**
 * The dashboard's one query cache. A 4xx answer is final (not signed in, not found, not allowed), so only
 * other failures are tried once more; switching back to the tab does not refetch every page's queries, as
 * the live stream (live.ts) already says what changed.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (failures, error) => failures < 1 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
        refetchOnWindowFocus: false,
      },
      mutations: { retry: false },
    },
  });
}

/**
 * The query key of a dashboard API path: its segments, then its query string. `/conversations/c1/messages?limit=100`
 * is ['conversations', 'c1', 'messages', '?limit=100'], so invalidating `/conversations/c1` refreshes that
 * conversation and its messages, and `/conversations` every conversation query.
 */
export function keyOf(path: string): QueryKey {
  const [pathname = '', search] = path.split('?', 2);
  const segments = pathname.split('/').filter(Boolean);
  return search ? [...segments, `?${search}`] : segments;
}

/**
 * GETs a dashboard API path through the cache; `enabled: false` skips it (e.g. an admin-only list for a member).
 * While a changed path (a new filter) loads, the previous answer stays on screen instead of blanking the page.
 */
export function useApi<T>(path: string, options: { enabled?: boolean; refetchInterval?: (data: T | undefined) => number | false } = {}) {
  const { refetchInterval } = options;
  return useQuery({
    queryKey: keyOf(path),
    queryFn: () => api<T>('GET', path),
    enabled: options.enabled ?? true,
    placeholderData: keepPreviousData,
    ...(refetchInterval ? { refetchInterval: (query: { state: { data: T | undefined } }) => refetchInterval(query.state.data) } : {}),
  });
}
