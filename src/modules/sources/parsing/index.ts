/**
 * Parsing and chunking of source documents: files (PDF, DOCX, Markdown, plain text, HTML) and crawled
 * pages become a title and structural blocks, and blocks become chunks that carry their heading path.
 */
import { parseDocx } from './docx.js';
import { parseHtml } from './html.js';
import { parseMarkdown } from './markdown.js';
import { parsePdf } from './pdf.js';
import { decodeText, parseText } from './text.js';
import { DocumentError, type Block, type FileKind, type ParsedDocument } from './types.js';

export { chunkDocument, type Chunk, type ChunkOptions } from './chunk.js';
export { detectFileKind } from './detect.js';
export { DEFAULT_MAX_EXPANDED_BYTES } from './docx.js';
export { parseHtml } from './html.js';
export { parseText } from './text.js';
export { DocumentError, type Block, type DocumentErrorCode, type FileKind, type ParsedDocument } from './types.js';

/** Text beyond this is dropped unless the caller sets its own bound (about 1,000 pages of prose). */
export const DEFAULT_MAX_TEXT_CHARS = 3_000_000;

/** What bounds a parse: the text kept (maxTextChars) and what an archive may expand to (maxExpandedBytes). */
export interface ParseOptions { maxTextChars?: number; maxExpandedBytes?: number }

/**
 * Parses a file (throws DocumentError: corrupt/encrypted PDF, DOCX bomb, empty, …), in this process: for
 * untrusted files the ingestion goes through the parse sandbox (sandbox.ts), which runs this in a child process.
 */
export async function parseFile(bytes: Uint8Array, kind: FileKind, options: ParseOptions = {}): Promise<ParsedDocument> {
  const maxTextChars = options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS;
  const doc = await parseByKind(bytes, kind, maxTextChars, options.maxExpandedBytes);
  const blocks = boundText(doc.blocks, maxTextChars);
  if (!blocks.some((block) => block.kind !== 'heading')) throw new DocumentError('The document has no text to read.');
  return { title: doc.title, blocks };
}

async function parseByKind(bytes: Uint8Array, kind: FileKind, maxTextChars: number, maxExpandedBytes: number | undefined): Promise<ParsedDocument> {
  switch (kind) {
    case 'pdf': return parsePdf(bytes, maxTextChars);
    case 'docx': return parseDocx(bytes, maxExpandedBytes);
    case 'markdown': return parseMarkdown(decodeText(bytes));
    case 'html': return parseHtml(decodeText(bytes), null);
    case 'text': return parseText(null, decodeText(bytes));
  }
}

/** The blocks up to maxTextChars characters of text, the last one cut at a word boundary. */
function boundText(blocks: Block[], maxTextChars: number): Block[] {
  const kept: Block[] = [];
  let left = maxTextChars;
  for (const block of blocks) {
    if (block.text.length <= left) {
      kept.push(block);
      left -= block.text.length;
      continue;
    }
    const endsInWord = /\S/.test(block.text.charAt(left));
    const cut = (endsInWord ? block.text.slice(0, left).replace(/\S*$/, '') : block.text.slice(0, left)).trimEnd();
    if (cut && block.kind !== 'heading') kept.push({ ...block, text: cut });
    break;
  }
  return kept;
}
