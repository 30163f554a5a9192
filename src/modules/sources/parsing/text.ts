import type { Block, ParsedDocument } from './types.js';

/** The text of an uploaded text file: UTF-8 (BOM dropped), UTF-16 with a BOM, else Windows-1252. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

const HEADING = /^(#{1,6})\s+(.+?)(?:\s+#+)?\s*$/;

/** Plain text: paragraphs split on blank lines; Markdown `#` headings honoured. The title is the one given, else the first heading. */
export function parseText(title: string | null, content: string): ParsedDocument {
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) blocks.push({ kind: 'paragraph', text: paragraph.join('\n') });
    paragraph = [];
  };
  for (const rawLine of content.replace(/\r\n?/g, '\n').split('\n')) {
    const line = rawLine.replace(/[ \t\f\v\u00a0]+/g, ' ').trim();
    const heading = HEADING.exec(line);
    if (heading?.[1] && heading[2]) {
      flush();
      blocks.push({ kind: 'heading', level: heading[1].length, text: heading[2] });
    } else if (line === '') {
      flush();
    } else {
      paragraph.push(line);
    }
  }
  flush();
  const cleanTitle = title?.trim() || null;
  return { title: cleanTitle ?? firstHeading(blocks), blocks };
}

/** The text of the first heading, if any. */
export function firstHeading(blocks: Block[]): string | null {
  return blocks.find((block) => block.kind === 'heading')?.text ?? null;
}
