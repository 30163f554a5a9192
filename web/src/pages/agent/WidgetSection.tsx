import { AppearanceFields } from '../AgentAppearance';
import { LANGUAGES, type Draft, type SetDraft } from './draft';

/** Widget: what the chat says first, the questions it offers, its language and the sites it runs on. */
export function WidgetSection({ draft, set }: { draft: Draft; set: SetDraft }) {
  return (
    <>
      <label>
        Welcome message
        <input maxLength={1000} value={draft.welcome_message ?? ''} onChange={(e) => set({ welcome_message: e.target.value })} />
      </label>
      <label>
        Suggested questions
        <textarea rows={3} placeholder="When are you open?" aria-describedby="questions-hint" value={draft.suggested_questions} onChange={(e) => set({ suggested_questions: e.target.value })} />
      </label>
      <span id="questions-hint" className="hint under">One per line, up to 6: offered as buttons before the visitor&apos;s first message.</span>
      <label>
        Language
        <select value={draft.language} onChange={(e) => set({ language: e.target.value as Draft['language'] })}>
          {LANGUAGES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <AppearanceFields value={draft.appearance} onChange={(appearance) => set({ appearance })} />
      <label>
        Allowed origins
        <textarea rows={3} placeholder="https://www.example.com" aria-describedby="origins-hint" value={draft.allowed_origins} onChange={(e) => set({ allowed_origins: e.target.value })} />
      </label>
      <span id="origins-hint" className="hint under">One per line: the websites where the chat widget may run.</span>
    </>
  );
}
