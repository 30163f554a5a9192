import { AppError, type FieldError } from '../../http/errors.js';
import { parseJson } from '../../lib/json.js';
import type { AppearanceInput, AppearanceView } from './schema.js';

/** The widget's look when an agent sets nothing: the colour and place it has always had. */
export const DEFAULT_APPEARANCE: AppearanceView = {
  color: '#2f5bd3',
  position: 'right',
  launcher: { label: null, icon: 'chat' },
  avatar_url: null,
  title: null,
};

const HEX_COLOUR = /^#[0-9a-f]{6}$/i;

/** The stored appearance (a JSON object, `{}` by default) with every absent member set to its default. */
export function presentAppearance(stored: string | null | undefined): AppearanceView {
  const saved = parseJson<Partial<AppearanceView> | null>(stored, null);
  if (!saved || typeof saved !== 'object') return { ...DEFAULT_APPEARANCE, launcher: { ...DEFAULT_APPEARANCE.launcher } };
  return { ...DEFAULT_APPEARANCE, ...saved, launcher: { ...DEFAULT_APPEARANCE.launcher, ...saved.launcher } };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

// A blank label or title is no label or title: the widget then shows its icon or the agent's name.
function textOrNull(text: string | null): string | null {
  const trimmed = text?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

function isHttpsUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/**
 * Applies a partial appearance (PATCH semantics: absent members stay, nested `launcher` merges too) and
 * checks what a JSON schema cannot say in words: the colour's form and the avatar's https URL.
 */
export function mergeAppearance(current: AppearanceView, input: AppearanceInput): AppearanceView {
  const errors: FieldError[] = [];
  const next: AppearanceView = { ...current, launcher: { ...current.launcher } };
  if (input.color !== undefined) {
    if (HEX_COLOUR.test(input.color)) next.color = input.color.toLowerCase();
    else errors.push({ pointer: '/appearance/color', message: `color must be a hex colour like #1a73e8: got "${clip(input.color)}"` });
  }
  if (input.position !== undefined) next.position = input.position;
  if (input.launcher?.label !== undefined) next.launcher.label = textOrNull(input.launcher.label);
  if (input.launcher?.icon !== undefined) next.launcher.icon = input.launcher.icon;
  if (input.title !== undefined) next.title = textOrNull(input.title);
  if (input.avatar_url !== undefined) {
    const url = textOrNull(input.avatar_url);
    if (url === null || isHttpsUrl(url)) next.avatar_url = url;
    else errors.push({ pointer: '/appearance/avatar_url', message: `avatar_url must be an https URL of an image, such as https://example.com/avatar.png: got "${clip(url)}"` });
  }
  if (errors.length > 0) throw AppError.validation(`appearance.${errors[0]!.message}.`, errors);
  return next;
}
