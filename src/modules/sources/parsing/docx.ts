import { parseHTML } from 'linkedom';
import mammoth from 'mammoth';
import { blocksFromDom, type DomNode } from './dom-blocks.js';
import { firstHeading } from './text.js';
import { collapseWhitespace, DocumentError, type ParsedDocument } from './types.js';
import { expandedSize, readSmallEntry, zipEntries } from './zip.js';

/** A DOCX that unpacks to more than this (SOURCE_MAX_EXPANDED_MB) is refused before mammoth reads it (a "zip bomb"). */
export const DEFAULT_MAX_EXPANDED_BYTES = 25 * 1024 * 1024;

/** A Word document through mammoth (→ HTML → blocks, so headings and lists survive); the title from its properties or first heading. */
export async function parseDocx(bytes: Uint8Array, maxExpandedBytes = DEFAULT_MAX_EXPANDED_BYTES): Promise<ParsedDocument> {
  const entries = zipEntries(bytes);
  if (!entries) throw new DocumentError('The file is not a valid DOCX (it is damaged, or not a ZIP archive).');
  if (!entries.some((entry) => entry.name === 'word/document.xml')) throw new DocumentError('The file is a ZIP archive but not a Word document.');
  await refuseBombs(bytes, entries, maxExpandedBytes);

  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      // Images carry no text; mammoth would otherwise inline each one as a data URI.
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) },
    );
    html = result.value;
  } catch (error) {
    throw new DocumentError(`The DOCX could not be read (it may be corrupt): ${error instanceof Error ? error.message : String(error)}`);
  }
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const blocks = blocksFromDom(document.body as unknown as DomNode, { dropChrome: false });
  return { title: coreTitle(bytes, entries) ?? firstHeading(blocks), blocks };
}

/** Declared sizes first (cheap), then the real ones, counted while inflating: declared sizes can lie. */
async function refuseBombs(bytes: Uint8Array, entries: NonNullable<ReturnType<typeof zipEntries>>, limit: number) {
  const tooLarge = () => new DocumentError(
    `The DOCX expands to more than ${Math.round(limit / 1024 / 1024)} MB when unpacked (SOURCE_MAX_EXPANDED_MB); it is refused as a likely zip bomb.`,
    'too_large_when_expanded',
  );
  if (entries.reduce((sum, entry) => sum + entry.declaredSize, 0) > limit) throw tooLarge();
  let total = 0;
  for (const entry of entries) {
    total += await expandedSize(bytes, entry, limit - total);
    if (total > limit) throw tooLarge();
  }
}

/** dc:title of docProps/core.xml, when set. */
function coreTitle(bytes: Uint8Array, entries: NonNullable<ReturnType<typeof zipEntries>>): string | null {
  const entry = entries.find((candidate) => candidate.name === 'docProps/core.xml');
  const xml = entry ? readSmallEntry(bytes, entry, 1024 * 1024)?.toString('utf8') : undefined;
  const raw = xml ? /<dc:title>([\s\S]*?)<\/dc:title>/.exec(xml)?.[1] : undefined;
  if (!raw) return null;
  const { document } = parseHTML(`<!doctype html><html><body><p>${raw}</p></body></html>`);
  return collapseWhitespace(document.body.textContent ?? '') || null;
}
