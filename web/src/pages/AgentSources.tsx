import { useState } from 'react';
import { api } from '../api';
import { useApi } from '../queries';
import type { Source, SourceList } from '../types';
import { ErrorText, useAction } from '../ui';
import { AddSource } from './SourceForms';
import { inProgress, SourceItem, sourceName } from './SourceItem';
import { TestRetrieval } from './TestRetrieval';

/** How often the list is refetched while a source is queued or syncing. */
const POLL_MS = 1000;
const LIST_LIMIT = 100;

/**
 * The agent editor's Sources section: the agent's knowledge sources with their status and progress (polled
 * every second while any is queued or syncing), the forms that add one, re-sync and delete, and a test of
 * what retrieval finds for a question.
 */
export function AgentSources({ agentId, readOnly }: { agentId: string; readOnly: boolean }) {
  const list = useApi<SourceList>(`/chatbots/${agentId}/sources?limit=${LIST_LIMIT}`, {
    // Polled while anything is queued or syncing, then not.
    refetchInterval: (page) => (page?.data.some(inProgress) ? POLL_MS : false),
  });
  const sources = list.data?.data;
  const loadError = list.error;
  const [deleting, setDeleting] = useState<Source | null>(null);
  // Adding, re-syncing or deleting a source refetches the list (and, with it, the polling while one syncs).
  const action = useAction(`/chatbots/${agentId}/sources`);

  async function sync(source: Source) {
    await action.run(() => api<Source>('POST', `/chatbots/${agentId}/sources/${source.id}/sync`));
  }
  async function remove(source: Source) {
    const done = await action.run(async () => {
      await api('DELETE', `/chatbots/${agentId}/sources/${source.id}`);
      return true;
    });
    if (done) setDeleting(null);
  }

  return (
    <section className="card stack sources" aria-labelledby="sources-title">
      <h2 id="sources-title">Sources</h2>
      <p className="hint">Websites, files, texts and Q&amp;A pairs the agent answers from. Websites and files are read in the background.</p>
      {deleting ? (
        <div className="card confirm" role="alertdialog" aria-labelledby="delete-source-text">
          <p id="delete-source-text">Delete “{sourceName(deleting)}”? Its documents leave the agent&apos;s knowledge at once.</p>
          <div className="row">
            <button type="button" className="danger" disabled={action.busy} onClick={() => void remove(deleting)}>
              Confirm delete
            </button>
            <button type="button" className="secondary" autoFocus onClick={() => setDeleting(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      <ErrorText error={action.error ?? loadError} />
      {sources === undefined ? (
        loadError ? null : <p className="hint">Loading sources…</p>
      ) : sources.length === 0 ? (
        <p className="empty">No sources yet: add a website, files, a text or a Q&amp;A pair below.</p>
      ) : (
        <ul className="source-list" aria-label="Sources of this agent">
          {sources.map((source) => (
            <SourceItem
              key={source.id}
              agentId={agentId}
              source={source}
              readOnly={readOnly}
              busy={action.busy}
              onSync={() => void sync(source)}
              onDelete={() => setDeleting(source)}
            />
          ))}
        </ul>
      )}
      {list.data?.has_more ? <p className="hint">Showing the newest {LIST_LIMIT} sources.</p> : null}
      {readOnly ? null : <AddSource agentId={agentId} onAdded={() => void list.refetch()} />}
      <TestRetrieval agentId={agentId} sources={sources ?? []} />
    </section>
  );
}
