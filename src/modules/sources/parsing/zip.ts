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

/**
 * The entries of a ZIP archive's central directory, or null when the bytes are not a ZIP archive. Strict,
 * so that every reader of the archive sees the same entries as this one: the central directory must end
 * exactly where the end record begins (a reader such as JSZip otherwise shifts every offset by the
 * difference, and one file can carry a decoy directory for a check and a bomb for the parser), the end
 * record's comment must run to the end of the file, every entry's data must lie before the directory, and
 * ZIP64 and multi-disk archives are refused (no document needs them under the upload limits).
 */
export function zipEntries(bytes: Uint8Array): ZipEntry[] | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = findEndOfDirectory(view);
  if (end === null) return null;
  const damaged = () => new DocumentError('The document is a damaged or irregular ZIP archive (its directory is not where its end record says).');
  const diskEntries = view.getUint16(end + 8, true);
  const count = view.getUint16(end + 10, true);
  const directorySize = view.getUint32(end + 12, true);
  const directoryStart = view.getUint32(end + 16, true);
  const commentLength = view.getUint16(end + 20, true);
  if (count === 0xffff || directorySize === 0xffffffff || directoryStart === 0xffffffff) {
    throw new DocumentError('The document is a ZIP64 archive, which is not read.');
  }
  if (view.getUint16(end + 4, true) !== 0 || view.getUint16(end + 6, true) !== 0 || diskEntries !== count) throw damaged();
  if (end + 22 + commentLength !== view.byteLength || directoryStart + directorySize !== end) throw damaged();
  if (count > MAX_ENTRIES) throw new DocumentError('The archive holds too many files to be a document.');
  const entries: ZipEntry[] = [];
  const decoder = new TextDecoder();
  let offset = directoryStart;
  for (let i = 0; i < count; i++) {
    if (offset + 46 > end || view.getUint32(offset, true) !== DIRECTORY_ENTRY) throw damaged();
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const entryCommentLength = view.getUint16(offset + 32, true);
    const entry: ZipEntry = {
      name: decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength)),
      method: view.getUint16(offset + 10, true),
      compressedSize: view.getUint32(offset + 20, true),
      declaredSize: view.getUint32(offset + 24, true),
      localHeaderOffset: view.getUint32(offset + 42, true),
    };
    if (entry.compressedSize === 0xffffffff || entry.declaredSize === 0xffffffff || entry.localHeaderOffset === 0xffffffff) {
      throw new DocumentError('The document is a ZIP64 archive, which is not read.');
    }
    if (entry.localHeaderOffset + 30 + entry.compressedSize > directoryStart) throw damaged();
    entries.push(entry);
    offset += 46 + nameLength + extraLength + entryCommentLength;
  }
  if (offset !== end) throw damaged();
  return entries;
}

/** The End Of Central Directory record: the last 22 bytes, or further back when the archive has a comment. */
function findEndOfDirectory(view: DataView): number | null {
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === END_OF_DIRECTORY) return at;
  }
  return null;
}

/** The bytes of an entry as stored (compressed) in the archive. */
function storedData(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeaderOffset;
  if (at + 30 > view.byteLength || view.getUint32(at, true) !== LOCAL_HEADER) throw new DocumentError('The document is a damaged ZIP archive.');
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  if (start + entry.compressedSize > view.byteLength) throw new DocumentError('The document is a damaged ZIP archive.');
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
