import { getDocumentProxy, getMeta } from 'unpdf';
import { collapseWhitespace, DocumentError, type Block, type ParsedDocument } from './types.js';

/** One line of text on a page: its text, baseline and type size. */
interface Line { text: string; y: number; size: number; page: number }

/** A PDF has no headings as such: a line set clearly larger than the body text is taken for one. */
const HEADING_SIZE_RATIO = 1.15;
const MAX_HEADING_CHARS = 150;
/** Lines further apart than this many times their type size are in different paragraphs. */
const PARAGRAPH_GAP_RATIO = 1.6;

/** The text of a PDF, page by page, as paragraphs (and headings from type size); the title from its metadata or first line. */
export async function parsePdf(bytes: Uint8Array, maxTextChars: number): Promise<ParsedDocument> {
  const pdf = await openPdf(bytes);
  try {
    const lines: Line[] = [];
    let chars = 0;
    for (let number = 1; number <= pdf.numPages && chars <= maxTextChars; number++) {
      const pageLines = await readPage(pdf, number);
      lines.push(...pageLines);
      chars += pageLines.reduce((sum, line) => sum + line.text.length, 0);
    }
    const blocks = linesToBlocks(lines);
    if (blocks.length === 0) throw new DocumentError('The PDF has no text to read (scanned pages are not read).');
    const info = await getMeta(pdf).then((meta) => meta.info, () => ({} as Record<string, unknown>));
    const metadataTitle = typeof info.Title === 'string' ? collapseWhitespace(info.Title) : '';
    return { title: metadataTitle || lines[0]?.text.slice(0, 200) || null, blocks };
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

async function openPdf(bytes: Uint8Array): Promise<PdfDocument> {
  try {
    // A copy: pdf.js may take over the buffer it is given.
    return await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false, disableFontFace: true, useSystemFonts: false });
  } catch (error) {
    throw pdfError(error);
  }
}

function pdfError(error: unknown): DocumentError {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'PasswordException') return new DocumentError('The PDF is protected by a password; upload a copy without one.');
  if (name === 'InvalidPDFException') return new DocumentError('The file is not a valid PDF (it may be corrupt or truncated).');
  const message = error instanceof Error ? error.message : String(error);
  return new DocumentError(`The PDF could not be read (it may be corrupt): ${message}`);
}

/** A page's text items gathered into lines (pdf.js marks line ends; a change of baseline ends one too). */
async function readPage(pdf: PdfDocument, number: number): Promise<Line[]> {
  let items: unknown[];
  try {
    items = (await (await pdf.getPage(number)).getTextContent()).items;
  } catch (error) {
    throw pdfError(error);
  }
  const lines: Line[] = [];
  let current: Line | null = null;
  const end = () => {
    if (current && current.text.trim()) lines.push({ ...current, text: collapseWhitespace(current.text) });
    current = null;
  };
  for (const item of items) {
    if (!item || typeof item !== 'object' || !('str' in item)) continue;
    const { str, transform, height, hasEOL } = item as { str: string; transform: number[]; height: number; hasEOL: boolean };
    const y = transform[5] ?? 0;
    const size = Math.max(height, Math.abs(transform[3] ?? 0));
    if (str) {
      const line: Line = current ?? { text: '', y, size, page: number };
      if (current && Math.abs(line.y - y) > line.size * 0.5) {
        end();
        current = { text: str, y, size, page: number };
      } else {
        line.text += str;
        line.size = Math.max(line.size, size);
        current = line;
      }
    }
    if (hasEOL) end();
  }
  end();
  return lines;
}

/** Lines to blocks: paragraphs split at wide gaps, page ends and changes of type size; large short lines become headings. */
function linesToBlocks(lines: Line[]): Block[] {
  const bodySize = typicalSize(lines);
  const isHeading = (line: Line) => line.size >= bodySize * HEADING_SIZE_RATIO && line.text.length <= MAX_HEADING_CHARS;
  const headingSizes = [...new Set(lines.filter(isHeading).map((line) => Math.round(line.size * 2) / 2))].sort((a, b) => b - a);
  const blocks: Block[] = [];
  let group: Line[] = [];
  const flush = () => {
    const first = group[0];
    if (first && isHeading(first)) {
      const level = Math.min(6, headingSizes.indexOf(Math.round(first.size * 2) / 2) + 1);
      blocks.push({ kind: 'heading', level, text: collapseWhitespace(group.map((line) => line.text).join(' ')) });
    } else if (first) {
      blocks.push({ kind: 'paragraph', text: joinLines(group.map((line) => line.text)) });
    }
    group = [];
  };
  for (const line of lines) {
    const previous = group[group.length - 1];
    const sameParagraph = previous
      && previous.page === line.page
      && isHeading(previous) === isHeading(line)
      && Math.abs(previous.size - line.size) < 0.5
      && previous.y > line.y
      && previous.y - line.y <= previous.size * PARAGRAPH_GAP_RATIO;
    if (!sameParagraph) flush();
    group.push(line);
  }
  flush();
  return blocks;
}

/** The type size most of the text is set in. */
function typicalSize(lines: Line[]): number {
  const charsBySize = new Map<number, number>();
  for (const line of lines) charsBySize.set(line.size, (charsBySize.get(line.size) ?? 0) + line.text.length);
  let best = 0;
  let bestChars = -1;
  for (const [size, chars] of charsBySize) if (chars > bestChars) [best, bestChars] = [size, chars];
  return best;
}

/** Wrapped lines joined back; a line ending in a hyphen joins the next without a space (the hyphen kept: it may belong to the word). */
function joinLines(lines: string[]): string {
  return lines.reduce((text, line) => (/\p{L}-$/u.test(text) && /^\p{Ll}/u.test(line) ? text + line : `${text} ${line}`)).trim();
}
