import { ActiveProvider, ModelField } from '../ModelPicker';
import type { Draft, SetDraft } from './draft';

/** Behaviour: who the agent is and how it answers. */
export function BehaviourSection({ draft, set }: { draft: Draft; set: SetDraft }) {
  return (
    <>
      <label>
        Name
        <input required maxLength={200} value={draft.name} onChange={(e) => set({ name: e.target.value })} />
      </label>
      <label>
        Description
        <input maxLength={1000} value={draft.description ?? ''} onChange={(e) => set({ description: e.target.value })} />
      </label>
      <label>
        Instructions
        <textarea rows={7} maxLength={20000} aria-describedby="instructions-hint" value={draft.instructions} onChange={(e) => set({ instructions: e.target.value })} />
      </label>
      <span id="instructions-hint" className="hint under">How the agent behaves: tone, what to help with, what to avoid.</span>
      <ActiveProvider />
      <div className="row">
        <div className="grow">
          <ModelField value={draft.model} onChange={(model) => set({ model })} />
        </div>
        <label>
          Temperature
          <input type="number" min={0} max={2} step={0.1} placeholder="default" value={draft.temperature} onChange={(e) => set({ temperature: e.target.value })} />
        </label>
      </div>
    </>
  );
}

/** The knowledge entries: text the agent answers from, beside its synced sources. */
export function KnowledgeFields({ draft, set }: { draft: Draft; set: SetDraft }) {
  const edit = (index: number, changes: Partial<Draft['knowledge'][number]>) => set({ knowledge: draft.knowledge.map((k, i) => (i === index ? { ...k, ...changes } : k)) });
  return (
    <fieldset className="stack knowledge">
      <legend>Knowledge</legend>
      <p className="hint">Text the agent answers from: opening hours, prices, policies…</p>
      {draft.knowledge.map((entry, index) => (
        <div key={index} className="knowledge-entry stack">
          <label>
            Title
            <input required maxLength={200} value={entry.title} onChange={(e) => edit(index, { title: e.target.value })} />
          </label>
          <label>
            Content
            <textarea required rows={3} maxLength={20000} value={entry.content} onChange={(e) => edit(index, { content: e.target.value })} />
          </label>
          <button type="button" className="secondary" onClick={() => set({ knowledge: draft.knowledge.filter((_, i) => i !== index) })}>
            Remove entry {index + 1}
          </button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => set({ knowledge: [...draft.knowledge, { title: '', content: '' }] })}>
        Add knowledge entry
      </button>
    </fieldset>
  );
}
