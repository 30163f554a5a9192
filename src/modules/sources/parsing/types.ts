/** The kinds of file a source can be made of. */
export type FileKind = 'pdf' | 'docx' | 'markdown' | 'text' | 'html';

/** One structural piece of a document, in reading order. */
export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph' | 'list_item' | 'code' | 'table'; text: string };

/** A document reduced to its title and its blocks. */
export interface ParsedDocument { title: string | null; blocks: Block[] }

/** A document that cannot be read: its message is shown to the user as the document's error. */
export class DocumentError extends Error {
  override name = 'DocumentError';
}

/** Whitespace runs collapsed to one space, ends trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
