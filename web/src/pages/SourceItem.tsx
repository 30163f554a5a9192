import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, when } from '../api';
import { keyOf } from '../queries';
import type { Source, SourceDocumentList } from '../types';
import { Badge, ErrorText } from '../ui';

const TYPE_LABELS: Record<Source['type'], string> = { website: 'Website', file: 'File', text: 'Text', qa: 'Q&A' };

/** A source's name in the list and in button names: its title, else its URL. */
export function sourceName(source: Source): string {
  return source.title ?? source.url ?? TYPE_LABELS[source.type];
}

/** True while an ingestion waits or runs. */
export function inProgress(source: Source): boolean {
  return source.status === 'queued' || source.status === 'syncing';
}

/** Documents done vs found in the running sync (`progress`; a crawl finds more as it goes); none yet while queued. */
function progressOf(source: Source): { done: number; total: number | null } {
  if (!source.progress) return { done: 0, total: null };
  return { done: source.progress.done, total: source.progress.found };
}

function Progress({ source }: { source: Source }) {
  const { done, total } = progressOf(source);
  const label = `Progress of ${sourceName(source)}`;
  const text =
    source.status === 'queued' ? 'Waiting to start' : total === null ? 'Starting' : `${done} of ${total} document${total === 1 ? '' : 's'} found so far`;
  return (
    <div className="progress-line">
      <div
        className={`progress${total === null && source.status === 'syncing' ? ' open-ended' : ''}`}
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuenow={done}
        {...(total !== null ? { 'aria-valuemax': total } : {})}
        aria-valuetext={text}
      >
        <span style={total === null ? undefined : { width: `${Math.round((done / Math.max(total, 1)) * 100)}%` }} className={source.status === 'queued' ? 'waiting' : undefined} />
      </div>
      <span className="hint">{text}</span>
    </div>
  );
}

function Documents({ agentId, source }: { agentId: string; source: Source }) {
  const path = `/chatbots/${agentId}/sources/${source.id}/documents?limit=100`;
  // Read again whenever the source changes: each stored document moves its updated_at while it syncs.
  const { data, error } = useQuery({
    queryKey: [...keyOf(path), source.updated_at],
    queryFn: () => api<SourceDocumentList>('GET', path),
    placeholderData: keepPreviousData,
  });
  const documents = data?.data;
  if (error) return <ErrorText error={error} />;
  if (!documents) return <p className="hint">Loading documents…</p>;
  if (documents.length === 0) return <p className="hint">No documents yet.</p>;
  return (
    <table className="documents">
      <caption className="sr-only">Documents of {sourceName(source)}</caption>
      <thead>
        <tr>
          <th scope="col">Document</th>
          <th scope="col">Status</th>
          <th scope="col">Chunks</th>
          <th scope="col">Error</th>
        </tr>
      </thead>
      <tbody>
        {documents.map((document) => (
          <tr key={document.id}>
            <td className="document-name">
              {/^https?:/.test(document.url) ? <a href={document.url} target="_blank" rel="noreferrer">{document.title ?? document.url}</a> : (document.title ?? document.url.replace(/^(file|text):/, ''))}
            </td>
            <td><Badge value={document.status} /></td>
            <td>{document.chunks}</td>
            <td className="error-cell">{document.error ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One source: type, name, status, counts, last sync; progress while it syncs; its documents on demand; re-sync and delete. */
export function SourceItem(props: { agentId: string; source: Source; readOnly: boolean; busy: boolean; onSync: () => void; onDelete: () => void }) {
  const { agentId, source, readOnly, busy } = props;
  const [open, setOpen] = useState(false);
  const name = sourceName(source);
  const panelId = `documents-${source.id}`;
  return (
    <li className="source" aria-label={name}>
      <div className="source-head">
        <span className="source-type">{TYPE_LABELS[source.type]}</span>
        <span className="source-name">
          {source.url ? (
            <a href={source.url} target="_blank" rel="noreferrer">{name}</a>
          ) : (
            name
          )}
          {source.url && source.title ? <span className="hint"> {source.url}</span> : null}
        </span>
        <Badge value={source.status} />
      </div>
      <p className="source-stats hint">
        {source.stats.documents} document{source.stats.documents === 1 ? '' : 's'} · {source.stats.chunks} chunk{source.stats.chunks === 1 ? '' : 's'}
        {source.stats.failed_documents > 0 ? <strong className="failed-count"> · {source.stats.failed_documents} failed</strong> : null} · last synced {when(source.last_synced_at)}
      </p>
      {inProgress(source) ? <Progress source={source} /> : null}
      {source.error ? <p className="error">{source.error}</p> : null}
      <div className="row source-actions">
        <button type="button" className="link" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen(!open)}>
          {open ? 'Hide' : 'Show'} documents<span className="sr-only"> of {name}</span>
        </button>
        {!readOnly && (source.type === 'website' || source.type === 'file') ? (
          <button type="button" className="secondary small" disabled={busy || inProgress(source)} onClick={props.onSync}>
            Re-sync<span className="sr-only"> {name}</span>
          </button>
        ) : null}
        {!readOnly ? (
          <button type="button" className="danger small" disabled={busy} onClick={props.onDelete}>
            Delete<span className="sr-only"> {name}</span>
          </button>
        ) : null}
      </div>
      {open ? (
        <div id={panelId}>
          <Documents agentId={agentId} source={source} />
        </div>
      ) : null}
    </li>
  );
}
