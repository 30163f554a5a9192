/**
 * Document fixtures made at test time (no binary files in the repository): PDFs through pdfkit, DOCX files
 * through the docx package, and the bad inputs a source upload must survive (corrupt PDF, encrypted PDF,
 * a DOCX that expands enormously). Every maker returns the file's bytes as a Buffer.
 */
import { crc32, deflateRawSync, constants as zlibConstants } from 'node:zlib';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
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

/** One DOCX block: a heading (level 1–3, default 1), a paragraph, or a bullet list item. */
export type DocxBlock = { heading: string; level?: 1 | 2 | 3 } | { paragraph: string } | { bullet: string };

const HEADING_LEVELS = { 1: HeadingLevel.HEADING_1, 2: HeadingLevel.HEADING_2, 3: HeadingLevel.HEADING_3 } as const;

/** A DOCX with the blocks in order (Word heading styles, bulleted list items), and an optional core title. */
export async function makeDocx(blocks: DocxBlock[], options: { title?: string } = {}): Promise<Buffer> {
  const children = blocks.map((block) => {
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

/** A zip archive (stored entries, or entries already deflated with their CRC and uncompressed size). */
function zipArchive(entries: ZipEntry[]): Buffer {
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
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
