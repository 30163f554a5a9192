import { useId } from 'react';
import type { Appearance } from '../types';

/** The widget's look when an agent sets nothing (the API's defaults). */
export const DEFAULT_APPEARANCE: Appearance = { color: '#2f5bd3', position: 'right', launcher: { label: null, icon: 'chat' }, avatar_url: null, title: null };

const ICONS: readonly [Appearance['launcher']['icon'], string][] = [
  ['chat', 'Speech bubble'],
  ['question', 'Question mark'],
  ['sparkle', 'Sparkle'],
];

const HEX_COLOUR = /^#[0-9a-f]{6}$/i;

// An empty text field is "none" (null): the widget then shows the icon alone, the agent's name, no avatar.
const orNull = (text: string) => (text.trim() === '' ? null : text);

function isHttpsUrl(text: string): boolean {
  try {
    return new URL(text).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The appearance part of the agent editor: colour, position, launcher label and icon, avatar and title.
 * Controlled: every change hands the whole next appearance to `onChange`. What the API would refuse is
 * said beside its field before saving.
 */
export function AppearanceFields({ value, onChange }: { value: Appearance; onChange(next: Appearance): void }) {
  const id = useId();
  const set = (changes: Partial<Appearance>) => onChange({ ...value, ...changes });
  const setLauncher = (changes: Partial<Appearance['launcher']>) => set({ launcher: { ...value.launcher, ...changes } });
  const colourOk = HEX_COLOUR.test(value.color);
  const avatarOk = value.avatar_url === null || isHttpsUrl(value.avatar_url);
  return (
    <fieldset className="stack">
      <legend>Appearance</legend>
      <div className="row">
        <label>
          Colour
          <input type="color" value={colourOk ? value.color.toLowerCase() : DEFAULT_APPEARANCE.color} onChange={(e) => set({ color: e.target.value })} />
        </label>
        <label>
          Colour code
          <input
            value={value.color}
            maxLength={7}
            spellCheck={false}
            aria-invalid={!colourOk}
            aria-describedby={`${id}-colour`}
            onChange={(e) => set({ color: e.target.value.trim() })}
          />
        </label>
      </div>
      <span id={`${id}-colour`} className={colourOk ? 'hint under' : 'error'} role={colourOk ? undefined : 'alert'}>
        {colourOk ? 'The launcher, the header and the visitor\'s messages; their text turns white or black to stay readable.' : 'Enter a hex colour like #1a73e8.'}
      </span>
      <fieldset className="row">
        <legend>Position</legend>
        {(['right', 'left'] as const).map((position) => (
          <label key={position} className="inline">
            <input type="radio" name={`${id}-position`} value={position} checked={value.position === position} onChange={() => set({ position })} />
            Bottom {position}
          </label>
        ))}
      </fieldset>
      <div className="row">
        <label>
          Launcher label
          <input maxLength={40} placeholder="Ask us" aria-describedby={`${id}-label`} value={value.launcher.label ?? ''} onChange={(e) => setLauncher({ label: orNull(e.target.value) })} />
        </label>
        <label>
          Launcher icon
          <select value={value.launcher.icon} onChange={(e) => setLauncher({ icon: e.target.value as Appearance['launcher']['icon'] })}>
            {ICONS.map(([icon, label]) => (
              <option key={icon} value={icon}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <span id={`${id}-label`} className="hint under">
        With a label the launcher is a button with that text; without one it shows the icon.
      </span>
      <label>
        Avatar URL
        <input
          type="url"
          maxLength={2048}
          placeholder="https://www.example.com/avatar.png"
          aria-invalid={!avatarOk}
          aria-describedby={`${id}-avatar`}
          value={value.avatar_url ?? ''}
          onChange={(e) => set({ avatar_url: orNull(e.target.value) })}
        />
      </label>
      <span id={`${id}-avatar`} className={avatarOk ? 'hint under' : 'error'} role={avatarOk ? undefined : 'alert'}>
        {avatarOk ? 'An https image, shown in the header and beside the agent\'s answers. Empty: none.' : 'The avatar must be an https URL, such as https://www.example.com/avatar.png.'}
      </span>
      <label>
        Title
        <input maxLength={60} placeholder="The agent's name" aria-describedby={`${id}-title`} value={value.title ?? ''} onChange={(e) => set({ title: orNull(e.target.value) })} />
      </label>
      <span id={`${id}-title`} className="hint under">
        The heading of the chat panel. Empty: the agent&apos;s name.
      </span>
    </fieldset>
  );
}
