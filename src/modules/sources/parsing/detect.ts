import type { FileKind } from './types.js';

const BY_EXTENSION: Record<string, FileKind> = {
  pdf: 'pdf', docx: 'docx', md: 'markdown', markdown: 'markdown', mdown: 'markdown',
  html: 'html', htm: 'html', xhtml: 'html', txt: 'text', text: 'text',
};
const BY_MEDIA_TYPE: Record<string, FileKind> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/markdown': 'markdown', 'text/x-markdown': 'markdown',
  'text/html': 'html', 'application/xhtml+xml': 'html',
  'text/plain': 'text',
};
/** Media types that say nothing about the content. */
const UNINFORMATIVE_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', 'application/unknown']);

const ascii = new TextDecoder('latin1');

/**
 * The kind of an uploaded file from its name, declared media type and first bytes; null = unsupported (415).
 * Give it a few KiB of head (up to 64 KiB is read): a DOCX named neither .docx nor by its media type is
 * recognised by the name of its main part, which Word writes about 1 KB into the file.
 */
export function detectFileKind(filename: string, mediaType: string | null, head: Uint8Array): FileKind | null {
  const headText = ascii.decode(head.subarray(0, 64 * 1024));
  if (headText.slice(0, 1024).includes('%PDF-')) return 'pdf';

  const declared = declaredKind(filename, mediaType);
  if (headText.startsWith('PK\x03\x04')) {
    // Zip entry names are stored uncompressed, so a Word document shows its main part early; a short head
    // may end before it, hence the declared type as a second witness.
    return headText.includes('word/document.xml') || declared.kind === 'docx' ? 'docx' : null;
  }
  if (!looksLikeText(head)) return null;
  if (declared.kind === 'pdf' || declared.kind === 'docx') return null;
  if (declared.kind) return declared.kind;
  if (declared.claimsOtherType) return null;
  return /^\s*(<!doctype html|<html[\s>])/i.test(headText.replace(/^\uFEFF|^\xEF\xBB\xBF/, '')) ? 'html' : 'text';
}

/** What the name (first) or the media type claim; claimsOtherType when they name something unsupported. */
function declaredKind(filename: string, mediaType: string | null): { kind: FileKind | null; claimsOtherType: boolean } {
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  const fromName = extension ? BY_EXTENSION[extension] : undefined;
  if (fromName) return { kind: fromName, claimsOtherType: false };
  const type = mediaType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const fromType = BY_MEDIA_TYPE[type];
  if (fromType) return { kind: fromType, claimsOtherType: false };
  return { kind: null, claimsOtherType: type !== '' && !type.startsWith('text/') && !UNINFORMATIVE_TYPES.has(type) };
}

/** No NUL bytes and valid UTF-8 (or a single-byte encoding without control characters). */
function looksLikeText(head: Uint8Array): boolean {
  if (head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) return true;
  if (head.includes(0)) return false;
  // A multi-byte character may be cut at the end of the head.
  const body = head.subarray(0, Math.max(0, head.length - 3));
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
    return true;
  } catch {
    return !body.some((byte) => byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c);
  }
}
