import { LEAD_FIELDS, type Draft, type SetDraft } from './draft';

/** Lead capture: whether and how the widget asks visitors for their contact details. */
export function LeadCaptureSection({ draft, set }: { draft: Draft; set: SetDraft }) {
  const lead = draft.lead_capture;
  const setLead = (changes: Partial<Draft['lead_capture']>) => set({ lead_capture: { ...lead, ...changes } });
  return (
    <fieldset className="stack">
      <legend>Lead capture</legend>
      <label className="inline">
        <input type="checkbox" checked={lead.enabled} onChange={(e) => setLead({ enabled: e.target.checked })} />
        Ask visitors for their contact details
      </label>
      <div className="row" role="group" aria-label="Fields to ask for">
        {LEAD_FIELDS.map((field) => (
          <label key={field} className="inline">
            <input type="checkbox" checked={lead.fields.includes(field)} onChange={(e) => setLead({ fields: e.target.checked ? [...lead.fields, field] : lead.fields.filter((f) => f !== field) })} />
            {field}
          </label>
        ))}
      </div>
      <label>
        Lead prompt
        <input maxLength={500} value={lead.prompt ?? ''} onChange={(e) => setLead({ prompt: e.target.value })} />
      </label>
      <p className="hint">New leads appear under Leads; the widget offers the form when the visitor asks to be contacted.</p>
    </fieldset>
  );
}
