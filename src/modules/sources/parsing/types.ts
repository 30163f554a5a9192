/** The kinds of file a source can be made of. */
export type FileKind = 'pdf' | 'docx' | 'markdown' | 'text' | 'html';

/** One structural piece of a document, in reading order. */
export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph' | 'list_item' | 'code' | 'table'; text: string };

/** A document reduced to its title and its blocks. */
export interface ParsedDocument { title: string | null; blocks: Block[] }

/**
 * Why a document could not be read, as the API names it: `unreadable` (corrupt, encrypted, empty, of a kind
 * not read), `too_large_when_expanded` (it unpacks or parses past the memory allowed), `took_too_long` (past
 * the parse deadline), `fetch_failed` (a crawled page that could not be fetched).
 */
export type DocumentErrorCode = 'unreadable' | 'too_large_when_expanded' | 'took_too_long' | 'fetch_failed';

/** A document that cannot be read: its message is shown to the user as the document's error, beside its code. */
export class DocumentError extends Error {
  override name = 'DocumentError';
  constructor(message: string, readonly code: DocumentErrorCode = 'unreadable') {
    super(message);
  }
}

/** Whitespace runs collapsed to one space, ends trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
