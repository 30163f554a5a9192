/** A field-level validation problem: a JSON pointer into the body, or a query/path parameter name. */
export interface FieldError {
  pointer?: string;
  parameter?: string;
  message: string;
}

/** The closed set of error codes the API can answer with, and their status and title. */
export const ERROR_CODES = {
  invalid_request: { status: 400, title: 'Invalid request' },
  validation_failed: { status: 400, title: 'Validation failed' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  api_key_required: { status: 400, title: 'API key required' },
  missing_api_key: { status: 401, title: 'Missing API key' },
  not_signed_in: { status: 401, title: 'Not signed in' },
  invalid_credentials: { status: 401, title: 'Wrong email or password' },
  invalid_api_key: { status: 401, title: 'Invalid API key' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  insufficient_role: { status: 403, title: 'Not allowed for your role' },
  not_instance_owner: { status: 403, title: 'Only the instance owner' },
  csrf_failed: { status: 403, title: 'CSRF check failed' },
  signup_closed: { status: 403, title: 'Sign-up is closed' },
  invitation_email_mismatch: { status: 403, title: 'Invitation is for another email' },
  invalid_visitor_token: { status: 401, title: 'Invalid visitor token' },
  origin_not_allowed: { status: 403, title: 'Origin not allowed' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  request_timeout: { status: 408, title: 'Request timeout' },
  invalid_status_transition: { status: 409, title: 'Invalid status transition' },
  chatbot_archived: { status: 409, title: 'AI Agent is archived' },
  chatbot_not_active: { status: 409, title: 'AI Agent is not active' },
  conversation_closed: { status: 409, title: 'Conversation is closed' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency key in use' },
  email_taken: { status: 409, title: 'Email already registered' },
  last_owner: { status: 409, title: 'A workspace needs an owner' },
  provider_set_by_environment: { status: 409, title: 'Provider set by environment variables' },
  secret_key_required: { status: 409, title: 'SECRET_KEY required' },
  quota_exceeded: { status: 409, title: 'Quota exceeded' },
  invitation_invalid: { status: 410, title: 'Invitation no longer valid' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  rate_limited: { status: 429, title: 'Too many requests' },
  too_many_streams: { status: 429, title: 'Too many open event streams' },
  request_header_fields_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  storage_full: { status: 503, title: 'Storage full' },
} as const;

/** A stable, snake_case error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Extension members a problem may carry besides the standard ones. */
export type ProblemExtensions = {
  errors?: FieldError[];
  required_scope?: string;
  'violated-policies'?: string[];
  [member: string]: unknown;
};

/** The one error type of the service: everything a handler or service throws on purpose is an AppError. */
export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly extensions: ProblemExtensions = {},
    /** Extra response headers, e.g. WWW-Authenticate or Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    // An AppError is an expected answer, not a fault: skip capturing a stack trace (it costs more than
    // the rest of a refused request).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.status = ERROR_CODES[code].status;
    this.title = ERROR_CODES[code].title;
  }

  /** 404 for a resource that does not exist in the caller's workspace (or has a malformed id). */
  static notFound(kind: string, id: string): AppError {
    return new AppError('not_found', `No ${kind} with id "${truncate(id, 80)}" exists in this workspace.`);
  }

  /** 400 with field-level errors. */
  static validation(detail: string, errors: FieldError[]): AppError {
    return new AppError('validation_failed', detail, { errors });
  }
}

/** The problem-type URI of a code: a page of the API reference that explains it. */
export function problemType(code: ErrorCode): string {
  if (code === 'rate_limited') return 'https://iana.org/assignments/http-problem-types#quota-exceeded';
  return `/docs/errors#${code}`;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
