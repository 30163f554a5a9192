import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_write_guarantees.js';
import * as m0003 from './0003_daily_stats.js';
import * as m0005 from './0005_knowledge_search.js';
import * as m0006 from './0006_accounts.js';
import * as m0007 from './0007_runtime.js';
import * as m0008 from './0008_idempotency_records_by_rowid.js';
import * as m0009 from './0009_idempotency_records_keyed.js';
import * as m0010 from './0010_invitation_revocation.js';
import * as m0011 from './0011_sources.js';
import * as m0012 from './0012_knowledge_chunks.js';
import * as m0013 from './0013_knowledge_to_sources.js';
import * as m0014 from './0014_knowledge_vectors.js';
import * as m0015 from './0015_source_sync_progress.js';
import * as m0016 from './0016_answers.js';
import * as m0017 from './0017_drop_knowledge_entries.js';
import * as m0018 from './0018_events.js';
import * as m0019 from './0019_webhooks.js';
import * as m0020 from './0020_password_resets.js';
import * as m0021 from './0021_chatbot_appearance.js';
import * as m0022 from './0022_provider_settings.js';
import * as m0023 from './0023_conversation_origin.js';
import * as m0024 from './0024_idempotency_records_without_secrets.js';
import * as m0025 from './0025_event_conversations.js';
import * as m0026 from './0026_mail_budget.js';
import * as m0027 from './0027_document_error_codes.js';
import * as m0030 from './0030_languages.js';

/** Every migration, in order. Names sort lexically; never rename or edit one that has shipped. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_write_guarantees': m0002,
  '0003_daily_stats': m0003,
  '0005_knowledge_search': m0005,
  '0006_accounts': m0006,
  '0007_runtime': m0007,
  '0008_idempotency_records_by_rowid': m0008,
  '0009_idempotency_records_keyed': m0009,
  '0010_invitation_revocation': m0010,
  '0011_sources': m0011,
  '0012_knowledge_chunks': m0012,
  '0013_knowledge_to_sources': m0013,
  '0014_knowledge_vectors': m0014,
  '0015_source_sync_progress': m0015,
  '0016_answers': m0016,
  '0017_drop_knowledge_entries': m0017,
  '0018_events': m0018,
  '0019_webhooks': m0019,
  '0020_password_resets': m0020,
  '0021_chatbot_appearance': m0021,
  '0022_provider_settings': m0022,
  '0023_conversation_origin': m0023,
  '0024_idempotency_records_without_secrets': m0024,
  '0025_event_conversations': m0025,
  '0026_mail_budget': m0026,
  '0027_document_error_codes': m0027,
  '0030_languages': m0030,
};
