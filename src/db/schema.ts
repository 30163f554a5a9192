import type { Generated, Kysely, Transaction } from 'kysely';
import type { UsersTable, MembershipsTable, SessionsTable, MailJobsTable, PasswordResetsTable, InvitationsTable } from './account-tables.js';
import type { WebhookEndpointsTable, WebhookDeliveriesTable, WebhookAttemptsTable } from './webhook-tables.js';
import type { SourcesTable, SourceFilesTable, SourceDocumentsTable, KnowledgeChunksTable, KnowledgeVectorIndexesTable, KnowledgeVectorCellsTable, KnowledgeVectorsTable, KnowledgeTermsTable, KnowledgeTermVariantsTable } from './knowledge-tables.js';

/**
 * Table types as Kysely sees them. Timestamps are ISO 8601 UTC strings with milliseconds, JSON
 * columns are text and booleans are 0/1 integers, so that SQLite and PostgreSQL store the same thing
 * (see docs/decisions/0002-portable-column-types.md).
 */
export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: string;
  /** Sequence number of the last audit event of the workspace (0: none yet). */
  audit_seq: Generated<number>;
  /** Hash of the last audit event ('' when none): the head of the chain. */
  audit_head: Generated<string>;
  /** Sequence number of the last domain event of the workspace (0: none yet). */
  event_seq: Generated<number>;
}

/** A domain event (migration 0018): a change that matters outside its request, numbered in commit order. */
export interface EventsTable {
  id: string;
  workspace_id: string;
  /** The workspace's events in commit order, from 1. */
  seq: number;
  /** `resource.verb`, e.g. `lead.created`. */
  type: string;
  created_at: string;
  /** JSON: the resource as the API presents it. */
  data: string;
  /** The conversation the event concerns (a conversation's, a message's, a lead's), else null: the widget's replay reads by it. */
  conversation_id: string | null;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  /** The first characters of the secret, safe to show ("wsk_AbCd…"). */
  display_prefix: string;
  /** SHA-256 (hex) of the whole secret; the secret itself is never stored. */
  secret_hash: string;
  /** JSON array of scope strings. */
  scopes: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface ChatbotsTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  status: string;
  instructions: string;
  welcome_message: string | null;
  model: string | null;
  temperature: number | null;
  knowledge: string;
  lead_capture: string;
  allowed_origins: string;
  metadata: string;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  /** JSON array of at most 6 questions the widget offers before the first message. */
  suggested_questions: Generated<string>;
  /** The widget's own words: 'auto' (the browser's language) or en, es, fr, de, pt. */
  language: Generated<string>;
  /** JSON object of the widget's look (colour, position, launcher, avatar, title); '{}' = the defaults. */
  appearance: Generated<string>;
  /** JSON object: per language (en, es, fr, de, pt), the welcome message and suggested questions; '{}' = none. */
  translations: Generated<string>;
}

export interface ConversationsTable {
  id: string;
  workspace_id: string;
  chatbot_id: string;
  status: string;
  mode: string;
  channel: string;
  visitor_id: string;
  visitor_name: string | null;
  visitor_email: string | null;
  lead_id: string | null;
  message_count: number;
  last_message_at: string | null;
  metadata: string;
  created_at: string;
  updated_at: string;
  /** When the visitor first asked for a person (null: never). */
  handoff_requested_at: string | null;
  /** The website (normalized origin) a widget conversation started on; null: the hosted page, the API, the dashboard. */
  origin: string | null;
  /** The visitor's browser language tag (`es-MX`), as the widget sent it; null when not given. */
  locale: string | null;
}

export interface MessagesTable {
  id: string;
  workspace_id: string;
  conversation_id: string;
  /** Copied from the conversation so analytics can filter messages by agent without a join. */
  chatbot_id: string;
  role: string;
  content: string;
  author_type: string;
  author_id: string | null;
  created_at: string;
  /** JSON array of the documents an assistant answer used ({source_id, document_id, title, url}). */
  sources: Generated<string>;
  /** What kind of turn an assistant answer was (answered, unanswered, …); null for visitor and operator messages. */
  outcome: string | null;
}

export interface LeadsTable {
  id: string;
  workspace_id: string;
  chatbot_id: string | null;
  conversation_id: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  status: string;
  source: string;
  custom_fields: string;
  created_at: string;
  updated_at: string;
}

export interface AuditEventsTable {
  id: string;
  workspace_id: string;
  seq: number;
  occurred_at: string;
  action: string;
  actor_type: string;
  actor_id: string;
  actor_name: string;
  target_type: string;
  target_id: string;
  /** JSON: { field: { before, after } }. */
  changes: string;
  request_id: string | null;
  idempotency_key: string | null;
  ip: string | null;
  user_agent: string | null;
  prev_hash: string;
  hash: string;
}

/** The stored result of an idempotent POST, written with the write it describes (migration 0009). */
export interface IdempotencyRecordsTable {
  api_key_id: string;
  idempotency_key: string;
  /** SHA-256 of method, path and canonical body: a different request under the same key is a 422. */
  fingerprint: string;
  response_status: number;
  /** JSON object of the headers replayed with the body (Content-Type, Location, ETag). */
  response_headers: string;
  response_body: string;
  created_at: string;
  expires_at: string;
}

/** Daily counters per workspace, AI Agent ('' for none) and UTC day, maintained by every write. */
export interface DailyStatsTable {
  workspace_id: string;
  day: string;
  chatbot_id: string;
  conversations_open: Generated<number>;
  conversations_closed: Generated<number>;
  conversations_with_lead: Generated<number>;
  /** Messages of the conversations started that day (for the average per conversation). */
  conversation_messages: Generated<number>;
  messages_user: Generated<number>;
  messages_assistant: Generated<number>;
  messages_operator: Generated<number>;
  leads: Generated<number>;
  /** Assistant answers of outcome `answered` / `unanswered` that day (issue 31). */
  answered: Generated<number>;
  unanswered: Generated<number>;
  /** Current ratings of that day's answers (a changed rating moves from one to the other). */
  feedback_up: Generated<number>;
  feedback_down: Generated<number>;
  /** Conversations whose visitor first asked for a person that day. */
  handoffs: Generated<number>;
}

/** A visitor's latest rating of one assistant message. */
export interface MessageFeedbackTable {
  message_id: string;
  workspace_id: string;
  chatbot_id: string;
  conversation_id: string;
  rating: 'up' | 'down';
  comment: string | null;
  created_at: string;
  updated_at: string;
}

/** A question the agent could not answer from its knowledge; `normalized` groups its wordings. */
export interface UnansweredQuestionsTable {
  id: string;
  workspace_id: string;
  chatbot_id: string;
  conversation_id: string;
  message_id: string;
  question: string;
  normalized: string;
  created_at: string;
}

/** A durable request for the agent's answer to one visitor message (see src/modules/runtime). */
export interface ReplyJobsTable {
  id: string;
  workspace_id: string;
  /** What the job does: answer a visitor message, or ingest a knowledge source (the one job queue). */
  kind: 'reply' | 'ingest';
  /** The source an ingest job syncs (null for replies). */
  source_id: string | null;
  /** The conversation of a reply job (null for ingest jobs). */
  conversation_id: string | null;
  /** The `user` message to answer; unique, so a message is answered at most once (null for ingest jobs). */
  message_id: string | null;
  state: 'pending' | 'running' | 'done' | 'failed';
  attempts: Generated<number>;
  /** Not claimed before this instant (backoff after a failed attempt). */
  run_after: string;
  /** While running: the lease; a job whose lease ran out (its runner died) is claimed again. */
  locked_until: string | null;
  last_error: string | null;
  /** The stored answer, once done (null when none was due: human mode, closed conversation). */
  reply_message_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A visitor's bearer token for one conversation; only its SHA-256 (hex) is stored. */
export interface VisitorTokensTable {
  token_hash: string;
  workspace_id: string;
  conversation_id: string;
  created_at: string;
}

/** The model provider chosen in the dashboard: one row (id `instance`) for the whole instance. */
export interface ProviderSettingsTable {
  id: string;
  provider: 'builtin' | 'openai' | 'anthropic';
  base_url: string | null;
  model: string | null;
  /** AES-256-GCM `v1.<iv>.<tag>.<ciphertext>`; never the key in clear. */
  api_key_ciphertext: string | null;
  api_key_last4: string | null;
  updated_at: string;
  updated_by: string | null;
}

/** Every table of the service. */
export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  chatbots: ChatbotsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  leads: LeadsTable;
  audit_events: AuditEventsTable;
  events: EventsTable;
  idempotency_records: IdempotencyRecordsTable;
  daily_stats: DailyStatsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  invitations: InvitationsTable;
  password_resets: PasswordResetsTable;
  mail_jobs: MailJobsTable;
  reply_jobs: ReplyJobsTable;
  visitor_tokens: VisitorTokensTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  knowledge_chunks: KnowledgeChunksTable;
  knowledge_vector_indexes: KnowledgeVectorIndexesTable;
  knowledge_vector_cells: KnowledgeVectorCellsTable;
  knowledge_vectors: KnowledgeVectorsTable;
  knowledge_terms: KnowledgeTermsTable;
  knowledge_term_variants: KnowledgeTermVariantsTable;
  sources: SourcesTable;
  source_files: SourceFilesTable;
  source_documents: SourceDocumentsTable;
  message_feedback: MessageFeedbackTable;
  unanswered_questions: UnansweredQuestionsTable;
  provider_settings: ProviderSettingsTable;
}

export type { UsersTable, MembershipsTable, SessionsTable, MailJobsTable, MailKind, PasswordResetsTable, InvitationsTable } from './account-tables.js';
export type { WebhookEndpointsTable, WebhookDeliveriesTable, WebhookAttemptsTable } from './webhook-tables.js';
export type { SourcesTable, SourceFilesTable, SourceDocumentsTable, KnowledgeChunksTable, KnowledgeVectorIndexesTable, KnowledgeVectorCellsTable, KnowledgeVectorsTable, KnowledgeTermsTable, KnowledgeTermVariantsTable } from './knowledge-tables.js';

/** A connection or an open transaction: repositories accept either. */
export type Db = Kysely<Database> | Transaction<Database>;
