/**
 * The tables of people and their mail: users, memberships, sessions, invitations, password resets and
 * queued emails. Part of `Database` (src/db/schema.ts).
 */
import type { Generated } from 'kysely';

/** A person who signs in to the dashboard. */
export interface UsersTable {
  id: string;
  /** Lowercased; unique. */
  email: string;
  /** argon2id PHC string. */
  password_hash: string;
  created_at: string;
}

/** A user's role in a workspace. */
export interface MembershipsTable {
  user_id: string;
  workspace_id: string;
  role: 'owner' | 'admin' | 'member';
  created_at: string;
  /** 0/1: email this member about new leads (migration 0020; on by default). */
  notify_new_lead: Generated<number>;
  /** 0/1: email this member when a visitor asks for a person. */
  notify_handoff: Generated<number>;
}

/** A signed-in browser. The id is the SHA-256 (hex) of the cookie token; the token itself is never stored. */
export interface SessionsTable {
  id: string;
  user_id: string;
  /** The workspace the session currently works in (switchable among the user's memberships). */
  workspace_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
}

/** What a queued email is: a notification visitors cause, the digest that stands for those past the budget, or an invitation. */
export type MailKind = 'new_lead' | 'handoff' | 'digest' | 'invitation';

/** A one-time link that makes its holder a member of a workspace. */
/** An email queued with what it tells of, sent by the job runner (lease and retries like webhook deliveries). */
export interface MailJobsTable {
  id: string;
  workspace_id: string;
  /** One email per fact and recipient (`lead:<id>:<user>`, `handoff:<conversation>:<at>:<user>`, `invitation:<id>`, `digest:<id>`). */
  dedupe_key: string;
  /** What it tells of: the notifications visitors cause (`new_lead`, `handoff`) count against the hourly budget. */
  kind: MailKind;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  /** `held`: a notification past the budget, never sent by itself; its digest (`digest_id`) tells of it. */
  state: 'pending' | 'running' | 'sent' | 'failed' | 'held';
  /** For a held notification: the digest email that counts it. */
  digest_id: string | null;
  attempts: Generated<number>;
  run_after: string;
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** A password reset link sent by email: single use, short-lived, stored as the token's hash. */
export interface PasswordResetsTable {
  /** SHA-256 (hex) of the link's token. */
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface InvitationsTable {
  id: string;
  /** SHA-256 (hex) of the link's token. */
  token_hash: string;
  workspace_id: string;
  role: 'owner' | 'admin' | 'member';
  email: string | null;
  created_by: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
  revoked_at: string | null;
  /** `user:<id>` of the member who revoked it. */
  revoked_by: string | null;
}
