/**
 * Document fixtures made at test time (no binary files in the repository): PDFs through pdfkit, DOCX files
 * through the docx package, and the bad inputs a source upload must survive (corrupt PDF, encrypted PDF,
 * a DOCX that expands enormously). Every maker returns the file's bytes as a Buffer.
 */
import { crc32, deflateRawSync, constants as zlibConstants } from 'node:zlib';
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import PDFDocument from 'pdfkit';

/** One PDF page: an optional heading (set in a larger font) and its paragraphs. */
export interface PdfPage { heading?: string; paragraphs: string[] }

/** Options of makePdf: the metadata title, and a user password (which encrypts the file). */
export interface PdfOptions { title?: string; userPassword?: string }

/** A PDF with one page per entry; headings in 20 pt bold, paragraphs in 11 pt separated by a blank line. */
export function makePdf(pages: PdfPage[], options: PdfOptions = {}): Promise<Buffer> {
  const pdf = new PDFDocument({
    autoFirstPage: false,
    info: options.title ? { Title: options.title } : {},
    ...(options.userPassword ? { userPassword: options.userPassword, pdfVersion: '1.7' as const } : {}),
  });
  const parts: Buffer[] = [];
  pdf.on('data', (part: Buffer) => parts.push(part));
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('end', () => resolve(Buffer.concat(parts)));
    pdf.on('error', reject);
  });
  for (const page of pages) {
    pdf.addPage();
    if (page.heading) pdf.font('Helvetica-Bold').fontSize(20).text(page.heading).moveDown();
    for (const paragraph of page.paragraphs) pdf.font('Helvetica').fontSize(11).text(paragraph).moveDown();
  }
  pdf.end();
  return done;
}

/** A PDF that needs a password to open. */
export function makeEncryptedPdf(): Promise<Buffer> {
  return makePdf([{ heading: 'Secret', paragraphs: ['Only for those who know the password.'] }], { userPassword: 'hunter2' });
}

/** Bytes that start like a PDF and then are not one. */
export function makeCorruptPdf(): Buffer {
  return Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R\nthis is not a pdf at all, the rest went missing\n');
}

/** One DOCX block: a heading (level 1–3, default 1), a paragraph, a bullet list item, or a table (rows of cells, the first the header). */
export type DocxBlock = { heading: string; level?: 1 | 2 | 3 } | { paragraph: string } | { bullet: string } | { table: string[][] };

const HEADING_LEVELS = { 1: HeadingLevel.HEADING_1, 2: HeadingLevel.HEADING_2, 3: HeadingLevel.HEADING_3 } as const;

/** A DOCX with the blocks in order (Word heading styles, bulleted list items), and an optional core title. */
export async function makeDocx(blocks: DocxBlock[], options: { title?: string } = {}): Promise<Buffer> {
  const children = blocks.map((block) => {
    if ('table' in block) {
      const rows = block.table.map((cells) => new TableRow({ children: cells.map((cell) => new TableCell({ children: [new Paragraph({ text: cell })] })) }));
      return new Table({ rows });
    }
    if ('heading' in block) return new Paragraph({ text: block.heading, heading: HEADING_LEVELS[block.level ?? 1] });
    if ('bullet' in block) return new Paragraph({ text: block.bullet, bullet: { level: 0 } });
    return new Paragraph({ text: block.paragraph });
  });
  const document = new Document({ ...(options.title ? { title: options.title } : {}), sections: [{ children }] });
  return Packer.toBuffer(document);
}

/**
 * A small DOCX whose word/document.xml expands to `expandedMb` MB of text (a "zip bomb"), built by hand in
 * milliseconds: one deflated megabyte, flushed so it stands alone, repeated. With `lieAboutSize` the zip
 * declares a tiny uncompressed size, so only actually inflating it shows the truth.
 */
export function makeDocxBomb(options: { expandedMb?: number; lieAboutSize?: boolean } = {}): Buffer {
  const megabytes = options.expandedMb ?? 200;
  const head = Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    + '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>');
  const tail = Buffer.from('</w:t></w:r></w:p></w:body></w:document>');
  const megabyte = Buffer.alloc(1024 * 1024, 'all work and no play makes a big document ');
  const flushed = (data: Buffer) => deflateRawSync(data, { finishFlush: zlibConstants.Z_FULL_FLUSH });
  const repeatedBlock = flushed(megabyte);
  let crc = crc32(head);
  for (let i = 0; i < megabytes; i++) crc = crc32(megabyte, crc);
  crc = crc32(tail, crc);
  const compressed = Buffer.concat([flushed(head), ...Array.from({ length: megabytes }, () => repeatedBlock), deflateRawSync(tail)]);
  const size = head.length + megabytes * megabyte.length + tail.length;
  return zipArchive([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(PACKAGE_RELS) },
    { name: 'word/document.xml', data: compressed, deflated: { crc, size: options.lieAboutSize ? 1000 : size } },
  ]);
}

const CONTENT_TYPES = '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
  + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
  + '<Default Extension="xml" ContentType="application/xml"/>'
  + '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const PACKAGE_RELS = '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
  + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

interface ZipEntry { name: string; data: Buffer; deflated?: { crc: number; size: number } }

/** A zip archive's two parts: its entries (local headers and data) and its central directory. */
interface ZipParts { locals: Buffer; directory: Buffer; count: number }

/** The parts of a zip archive (stored entries, or entries already deflated with their CRC and uncompressed size). */
function zipParts(entries: ZipEntry[]): ZipParts {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const crc = entry.deflated?.crc ?? crc32(entry.data);
    const size = entry.deflated?.size ?? entry.data.length;
    const method = entry.deflated ? 8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  return { locals: Buffer.concat(locals), directory: Buffer.concat(centrals), count: entries.length };
}

/** The End Of Central Directory record of a directory of `count` entries, `size` bytes long, declared at `offset`. */
function endOfDirectory(count: number, size: number, offset: number): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(size, 12);
  end.writeUInt32LE(offset, 16);
  return end;
}

/** A zip archive (stored entries, or entries already deflated with their CRC and uncompressed size). */
function zipArchive(entries: ZipEntry[]): Buffer {
  const { locals, directory, count } = zipParts(entries);
  return Buffer.concat([locals, directory, endOfDirectory(count, directory.length, locals.length)]);
}

/**
 * A DOCX that is two archives in one file: a harmless decoy where the end record says the directory is,
 * and a hidden one (`hidden`, e.g. a bomb) that a reader shifting offsets finds instead. The end record
 * declares the decoy's directory offset with the hidden directory's size, so the directory does not end
 * where the end record begins: JSZip (mammoth's reader) then shifts every offset by the difference, which
 * lands on the hidden directory and the hidden entries, while a check that trusts the declared offset
 * reads the decoy.
 */
export function makeDecoyDocx(hidden: Buffer): Buffer {
  const decoy = zipParts(docxEntries('<w:p><w:r><w:t>A harmless decoy.</w:t></w:r></w:p>'));
  const bomb = zipOf(hidden);
  if (decoy.count !== bomb.count) throw new Error('the decoy and the hidden archive must have as many entries');
  // The decoy's directory is declared where the hidden entries end, so the shift lands exactly on the hidden part.
  const padding = Buffer.alloc(bomb.locals.length - decoy.locals.length);
  const front = Buffer.concat([decoy.locals, padding, decoy.directory]);
  return Buffer.concat([front, bomb.locals, bomb.directory, endOfDirectory(bomb.count, bomb.directory.length, decoy.locals.length + padding.length)]);
}

/** The parts of a zip archive made by zipArchive (its directory found from its end record). */
function zipOf(archive: Buffer): ZipParts {
  const end = archive.length - 22;
  const size = archive.readUInt32LE(end + 12);
  const offset = archive.readUInt32LE(end + 16);
  return { locals: archive.subarray(0, offset), directory: archive.subarray(offset, offset + size), count: archive.readUInt16LE(end + 10) };
}

/** The three entries of a minimal DOCX whose body holds `bodyXml`. */
function docxEntries(bodyXml: string): ZipEntry[] {
  const documentXml = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${bodyXml}</w:body></w:document>`;
  return [
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(PACKAGE_RELS) },
    { name: 'word/document.xml', data: Buffer.from(documentXml) },
  ];
}

/** A small DOCX (stored, not deflated) whose body holds `bodyXml` (e.g. a marker paragraph). */
export function makeMinimalDocx(bodyXml: string): Buffer {
  return zipArchive(docxEntries(bodyXml));
}

/**
 * A PDF of one page whose content stream inflates to `expandedMb` MB (spaces after one line of text), in a
 * few MB: one deflated megabyte, flushed so it stands alone, repeated inside a zlib stream.
 */
export function makePdfBomb(expandedMb: number): Buffer {
  const megabyte = deflateRawSync(Buffer.alloc(1024 * 1024, 0x20), { finishFlush: zlibConstants.Z_FULL_FLUSH });
  const text = deflateRawSync(Buffer.from('BT /F1 12 Tf 72 712 Td (Hello from a very large stream) Tj ET\n'), { finishFlush: zlibConstants.Z_FULL_FLUSH });
  // zlib's header, the blocks, a final empty block and an Adler-32 that no reader checks before the end.
  const stream = Buffer.concat([Buffer.from([0x78, 0x9c]), text, ...Array.from({ length: expandedMb }, () => megabyte), deflateRawSync(Buffer.alloc(0)), Buffer.alloc(4)]);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    null,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  objects.forEach((object, index) => {
    offsets.push(length);
    const part = object === null
      ? Buffer.concat([Buffer.from(`${index + 1} 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from('\nendstream\nendobj\n')])
      : Buffer.from(`${index + 1} 0 obj\n${object}\nendobj\n`);
    parts.push(part);
    length += part.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`
    + `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  return Buffer.concat([...parts, Buffer.from(xref)]);
}
