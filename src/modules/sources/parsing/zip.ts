import { createInflateRaw, inflateRawSync } from 'node:zlib';
import { DocumentError } from './types.js';

/** One file of a ZIP archive as its central directory declares it. */
export interface ZipEntry { name: string; method: number; compressedSize: number; declaredSize: number; localHeaderOffset: number }

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const MAX_ENTRIES = 10_000;
const STORED = 0;
const DEFLATED = 8;

/** The entries of a ZIP archive's central directory, or null when the bytes are not a ZIP archive. */
export function zipEntries(bytes: Uint8Array): ZipEntry[] | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = findEndOfDirectory(view);
  if (end === null) return null;
  const count = view.getUint16(end + 10, true);
  let offset = view.getUint32(end + 16, true);
  if (count > MAX_ENTRIES) throw new DocumentError('The archive holds too many files to be a document.');
  const entries: ZipEntry[] = [];
  const decoder = new TextDecoder();
  for (let i = 0; i < count; i++) {
    if (offset + 46 > view.byteLength || view.getUint32(offset, true) !== DIRECTORY_ENTRY) return null;
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    const name = decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength));
    const entry: ZipEntry = {
      name,
      method: view.getUint16(offset + 10, true),
      compressedSize: view.getUint32(offset + 20, true),
      declaredSize: view.getUint32(offset + 24, true),
      localHeaderOffset: view.getUint32(offset + 42, true),
    };
    applyZip64Sizes(entry, view, offset + 46 + nameLength, extraLength);
    entries.push(entry);
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The End Of Central Directory record: the last 22 bytes, or further back when the archive has a comment. */
function findEndOfDirectory(view: DataView): number | null {
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === END_OF_DIRECTORY) return at;
  }
  return null;
}

/** ZIP64 keeps sizes and offsets that overflow 32 bits in an extra field (id 1), in this order. */
function applyZip64Sizes(entry: ZipEntry, view: DataView, extraStart: number, extraLength: number) {
  const fields = (['declaredSize', 'compressedSize', 'localHeaderOffset'] as const).filter((field) => entry[field] === 0xffffffff);
  if (fields.length === 0) return;
  for (let at = extraStart; at + 4 <= extraStart + extraLength;) {
    const id = view.getUint16(at, true);
    const size = view.getUint16(at + 2, true);
    if (id === 1) {
      fields.forEach((field, index) => {
        if (at + 4 + index * 8 + 8 <= view.byteLength) entry[field] = Number(view.getBigUint64(at + 4 + index * 8, true));
      });
      return;
    }
    at += 4 + size;
  }
}

/** The bytes of an entry as stored (compressed) in the archive. */
function storedData(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeaderOffset;
  if (at + 30 > view.byteLength || view.getUint32(at, true) !== LOCAL_HEADER) throw new DocumentError('The document is a damaged ZIP archive.');
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  return bytes.subarray(start, start + entry.compressedSize);
}

/**
 * How many bytes an entry really expands to, counted while inflating and given up past `limit` (a zip's
 * declared sizes may lie). Nothing is kept in memory but the count.
 */
export async function expandedSize(bytes: Uint8Array, entry: ZipEntry, limit: number): Promise<number> {
  const data = storedData(bytes, entry);
  if (entry.method === STORED) return data.length;
  if (entry.method !== DEFLATED) throw new DocumentError(`The document uses a ZIP compression method (${entry.method}) that is not supported.`);
  return new Promise((resolve, reject) => {
    const inflate = createInflateRaw({ chunkSize: 256 * 1024 });
    let total = 0;
    inflate.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        inflate.destroy();
        resolve(total);
      }
    });
    inflate.on('end', () => resolve(total));
    inflate.on('error', () => reject(new DocumentError('The document is a damaged ZIP archive.')));
    inflate.end(data);
  });
}

/** A small entry's content (a few properties), or null when it is larger than `limit` or unreadable. */
export function readSmallEntry(bytes: Uint8Array, entry: ZipEntry, limit: number): Buffer | null {
  try {
    const data = storedData(bytes, entry);
    if (entry.method === STORED) return data.length <= limit ? Buffer.from(data) : null;
    return entry.method === DEFLATED ? inflateRawSync(data, { maxOutputLength: limit }) : null;
  } catch {
    return null;
  }
}
