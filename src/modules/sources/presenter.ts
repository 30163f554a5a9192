import type { SourceDocumentRow, SourceRow } from './repository.js';
import type { SourceDocumentView, SourceView } from './schema.js';

/** A stored source as the API shows it (its config and origin stay internal). */
export function presentSource(row: SourceRow): SourceView {
  return {
    id: row.id,
    object: 'source',
    chatbot_id: row.chatbot_id,
    type: row.type,
    title: row.title,
    url: row.url,
    status: row.status,
    stats: { documents: Number(row.documents), chunks: Number(row.chunks), failed_documents: Number(row.failed_documents) },
    progress: row.status === 'syncing' && row.sync_done !== null
      ? { done: Number(row.sync_done), found: Math.max(Number(row.sync_done), Number(row.sync_found ?? 0)) }
      : null,
    error: row.error,
    sync_interval_hours: row.sync_interval_hours === null ? null : Number(row.sync_interval_hours),
    last_synced_at: row.last_synced_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A stored document of a source as the API shows it (its content hash stays internal). */
export function presentSourceDocument(row: SourceDocumentRow): SourceDocumentView {
  return {
    id: row.id,
    object: 'source_document',
    source_id: row.source_id,
    url: row.url,
    title: row.title,
    status: row.status,
    error: row.error,
    error_code: row.error_code ?? null,
    chunks: Number(row.chunks),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
