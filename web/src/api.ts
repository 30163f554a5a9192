/** A problem-details answer from /app/api (RFC 9457), thrown by `api()`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly fields: { pointer?: string; message: string }[] = [],
  ) {
    super(detail);
  }
}

let csrfToken = '';

/** Remembers the session's CSRF token (from sign-in, sign-up or GET /session). */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Calls the dashboard API: JSON in and out, the CSRF token on writes, problems thrown as ApiError. */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`/app/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return answer<T>(response);
}

/** POSTs a multipart form (a file upload) with the CSRF token; no Content-Type, so the browser sets the boundary. */
export async function upload<T = unknown>(path: string, form: FormData): Promise<T> {
  const response = await fetch(`/app/api${path}`, { method: 'POST', headers: { 'x-csrf-token': csrfToken }, credentials: 'same-origin', body: form });
  return answer<T>(response);
}

async function answer<T>(response: Response): Promise<T> {
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    throw new ApiError(response.status, data?.code ?? 'error', data?.detail ?? `Request failed (${response.status})`, data?.errors ?? []);
  }
  return data as T;
}

/** A query string from the defined, non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** A short local date and time for tables. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** A YYYY-MM-DD date `days` before today (UTC), for date inputs. */
export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

/** The start of a local date input's day as an ISO instant (for created_after filters). */
export function dayStart(date: string): string | undefined {
  return date ? new Date(`${date}T00:00:00.000Z`).toISOString() : undefined;
}

/** The end of a date input's day (exclusive) as an ISO instant. */
export function dayEnd(date: string): string | undefined {
  return date ? new Date(Date.parse(`${date}T00:00:00.000Z`) + 86_400_000).toISOString() : undefined;
}
