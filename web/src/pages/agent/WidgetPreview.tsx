import type { CSSProperties } from 'react';
import type { Appearance } from '../../types';

/** How the widget looks; every member optional (the widget's defaults fill the gaps). */
export type PreviewAppearance = Partial<Omit<Appearance, 'launcher'>> & { launcher?: Partial<Appearance['launcher']> };

/** The widget's own defaults (widget/widget.js). */
const DEFAULTS = { color: '#2f5bd3', position: 'right' as const };

/** The launcher icons (widget/widget.js ICONS). */
const ICONS: Record<Appearance['launcher']['icon'], string> = {
  chat: 'M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z',
  question:
    'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 17h-2v-2h2v2zm2.07-7.75-.9.92C13.45 12.9 13 13.5 13 15h-2v-.5c0-1.1.45-2.1 1.17-2.83l1.24-1.26A2 2 0 1 0 10 9H8a4 4 0 1 1 7.07 2.25z',
  sparkle: 'M12 2l2.4 7.6L22 12l-7.6 2.4L12 22l-2.4-7.6L2 12l7.6-2.4z',
};

const PLACEHOLDERS: Record<string, string> = {
  en: 'Type your message…',
  es: 'Escribe tu mensaje…',
  fr: 'Écrivez votre message…',
  de: 'Nachricht eingeben…',
  pt: 'Digite sua mensagem…',
};

/** Black or white, whichever reads better on `hex` (the widget picks its ink the same way). */
function inkOn(hex: string): string {
  const match = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  if (!match) return '#fff';
  const value = parseInt(match[1]!, 16);
  const channel = (shift: number) => {
    const c = ((value >> shift) & 255) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(16) + 0.7152 * channel(8) + 0.0722 * channel(0);
  return luminance > 0.179 ? '#111' : '#fff';
}

/**
 * A static picture of the widget with the form's unsaved values: the chat panel (title, welcome,
 * suggested questions) above its launcher. Nothing in it is interactive: the preview chat is for talking.
 */
export function WidgetPreview({ name, welcome, questions, language, appearance = {} }: { name: string; welcome: string | null; questions: string[]; language: string; appearance?: PreviewAppearance }) {
  const color = appearance.color || DEFAULTS.color;
  const position = appearance.position ?? DEFAULTS.position;
  const style = { '--widget': color, '--widget-ink': inkOn(color) } as CSSProperties;
  const label = appearance.launcher?.label?.trim();
  const iconPath = ICONS[appearance.launcher?.icon ?? 'chat'] ?? ICONS.chat;
  return (
    <figure className={`widget-preview ${position}`} style={style} aria-labelledby="widget-preview-caption">
      <figcaption id="widget-preview-caption">Widget preview</figcaption>
      <p className="hint">How the chat looks on your website with the values in the form, saved or not.</p>
      <div className="wp-site" aria-hidden="true">
        <div className="wp-panel">
          <div className="wp-header">
            {appearance.avatar_url ? <img className="wp-avatar" src={appearance.avatar_url} alt="" /> : <span className="wp-avatar wp-initial">{(appearance.title || name || '?').slice(0, 1).toUpperCase()}</span>}
            <span className="wp-title">{appearance.title || name}</span>
            <span className="wp-close">×</span>
          </div>
          <div className="wp-body">
            {welcome ? <p className="wp-msg">{welcome}</p> : null}
            {questions.length > 0 ? (
              <div className="wp-chips">
                {questions.map((question, i) => (
                  <span key={i} className="wp-chip">
                    {question}
                  </span>
                ))}
              </div>
            ) : null}
          </div>
          <div className="wp-input">
            <span>{PLACEHOLDERS[language] ?? PLACEHOLDERS.en}</span>
            <span className="wp-send">➤</span>
          </div>
        </div>
        <div className={`wp-launcher${label ? ' labelled' : ''}`}>
          {label ? null : (
            <svg className="wp-icon" viewBox="0 0 24 24" aria-hidden="true">
              <path d={iconPath} />
            </svg>
          )}
          {label ? <span>{label}</span> : null}
        </div>
      </div>
    </figure>
  );
}
