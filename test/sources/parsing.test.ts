import { describe, expect, it } from 'vitest';
import {
  chunkDocument,
  detectFileKind,
  DocumentError,
  parseFile,
  parseHtml,
  parseText,
  type Block,
  type ParsedDocument,
} from '../../src/modules/sources/parsing/index.js';
import { makeCorruptPdf, makeDocx, makeDocxBomb, makeEncryptedPdf, makePdf } from '../helpers/documents.js';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PNG_HEAD = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const text = (value: string) => new TextEncoder().encode(value);

/** The error a parse fails with (the test fails if it succeeds or throws anything but a DocumentError). */
async function documentError(parse: () => Promise<unknown>): Promise<DocumentError> {
  const error = await parse().then(() => null, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(DocumentError);
  return error as DocumentError;
}

describe('detectFileKind', () => {
  it('knows each supported type by name, media type and first bytes, and refuses the rest', async () => {
    const pdf = await makePdf([{ paragraphs: ['Hello.'] }]);
    const docx = await makeDocx([{ paragraph: 'Hello.' }]);
    expect(detectFileKind('handbook.pdf', 'application/pdf', pdf)).toBe('pdf');
    // The bytes decide when the name and the media type say nothing useful.
    expect(detectFileKind('upload', 'application/octet-stream', pdf)).toBe('pdf');
    expect(detectFileKind('upload.bin', null, docx)).toBe('docx');
    expect(detectFileKind('upload.bin', null, docx.subarray(0, 4096))).toBe('docx');
    expect(detectFileKind('policies.docx', DOCX_TYPE, docx)).toBe('docx');
    expect(detectFileKind('README.md', null, text('# Title\n\nBody'))).toBe('markdown');
    expect(detectFileKind('notes', 'text/markdown; charset=utf-8', text('# Title'))).toBe('markdown');
    expect(detectFileKind('page.html', 'text/html', text('<p>Hi</p>'))).toBe('html');
    expect(detectFileKind('page', null, text('  <!DOCTYPE html><html><body>Hi</body></html>'))).toBe('html');
    expect(detectFileKind('notes.txt', 'text/plain', text('Just words.'))).toBe('text');
    expect(detectFileKind('notes.csv', 'text/csv', text('a,b\n1,2'))).toBe('text');

    expect(detectFileKind('logo.png', 'image/png', PNG_HEAD)).toBeNull();
    expect(detectFileKind('upload', null, PNG_HEAD)).toBeNull();
    expect(detectFileKind('archive.zip', 'application/zip', Uint8Array.from([0x50, 0x4b, 0x03, 0x04, ...text('photos/one.jpg')]))).toBeNull();
    // A text file that claims to be a PDF is neither.
    expect(detectFileKind('report.pdf', 'application/pdf', text('not really a pdf'))).toBeNull();
    expect(detectFileKind('data.json', 'application/json', text('{"a":1}'))).toBeNull();
  });
});

describe('PDF', () => {
  it('reads text per page into paragraphs, headings from larger type, the title from metadata', async () => {
    const pdf = await makePdf(
      [
        { heading: 'Opening hours', paragraphs: ['We are open Monday to Friday from nine to five, and on Saturday mornings. '.repeat(3).trim(), 'Closed on public holidays.'] },
        { heading: 'Returns', paragraphs: ['Unworn items can be returned within thirty days.'] },
      ],
      { title: 'Customer handbook' },
    );
    const doc = await parseFile(pdf, 'pdf');
    expect(doc.title).toBe('Customer handbook');
    expect(doc.blocks).toEqual<Block[]>([
      { kind: 'heading', level: 1, text: 'Opening hours' },
      { kind: 'paragraph', text: 'We are open Monday to Friday from nine to five, and on Saturday mornings. '.repeat(3).trim() },
      { kind: 'paragraph', text: 'Closed on public holidays.' },
      { kind: 'heading', level: 1, text: 'Returns' },
      { kind: 'paragraph', text: 'Unworn items can be returned within thirty days.' },
    ]);
  });

  it('takes the title from the first line when the metadata has none', async () => {
    const doc = await parseFile(await makePdf([{ heading: 'Price list 2026', paragraphs: ['Espresso 1.50'] }]), 'pdf');
    expect(doc.title).toBe('Price list 2026');
  });

  it('fails a corrupt, encrypted, empty or textless PDF with a readable DocumentError', async () => {
    expect((await documentError(() => parseFile(makeCorruptPdf(), 'pdf'))).message).toMatch(/not a valid PDF|corrupt/i);
    expect((await documentError(async () => parseFile(await makeEncryptedPdf(), 'pdf'))).message).toMatch(/password/i);
    await documentError(() => parseFile(new Uint8Array(0), 'pdf'));
    const blank = await makePdf([{ paragraphs: [] }]);
    expect((await documentError(() => parseFile(blank, 'pdf'))).message).toMatch(/no text/i);
  });
});

describe('DOCX', () => {
  it('keeps headings, paragraphs and bullet lists, and the title of the document properties', async () => {
    const docx = await makeDocx(
      [
        { heading: 'Staff handbook' },
        { paragraph: 'Welcome to the team.' },
        { heading: 'Benefits', level: 2 },
        { bullet: 'Free coffee' },
        { bullet: 'Thirty days of holiday' },
        { paragraph: 'Ask HR for details.' },
      ],
      { title: 'Handbook 2026' },
    );
    const doc = await parseFile(docx, 'docx');
    expect(doc.title).toBe('Handbook 2026');
    expect(doc.blocks).toEqual<Block[]>([
      { kind: 'heading', level: 1, text: 'Staff handbook' },
      { kind: 'paragraph', text: 'Welcome to the team.' },
      { kind: 'heading', level: 2, text: 'Benefits' },
      { kind: 'list_item', text: 'Free coffee' },
      { kind: 'list_item', text: 'Thirty days of holiday' },
      { kind: 'paragraph', text: 'Ask HR for details.' },
    ]);
  });

  it('takes the first heading as the title when the properties have none', async () => {
    expect((await parseFile(await makeDocx([{ heading: 'Menu' }, { paragraph: 'Soup' }]), 'docx')).title).toBe('Menu');
  });

  it('refuses a DOCX that expands enormously, whether its zip tells the truth about sizes or not', async () => {
    expect((await documentError(() => parseFile(makeDocxBomb(), 'docx'))).message).toMatch(/expands to more than 25 MB/);
    expect((await documentError(() => parseFile(makeDocxBomb({ lieAboutSize: true }), 'docx'))).message).toMatch(/expands to more than 25 MB/);
  });

  it('fails bytes that are not a Word document with a DocumentError', async () => {
    await documentError(() => parseFile(text('plain words, no zip'), 'docx'));
    const pdf = await makePdf([{ paragraphs: ['Hello.'] }]);
    await documentError(() => parseFile(pdf, 'docx'));
    await documentError(async () => parseFile(await makeDocx([]), 'docx'));
  });
});

describe('Markdown', () => {
  it('reads headings, paragraphs, list items, code and tables, inline markup reduced to its text', async () => {
    const markdown = [
      '# Coffee guide',
      '',
      'Our **beans** come from [small farms](https://example.com/farms) in *Colombia* &amp; Peru.',
      '',
      '## Brewing',
      '',
      '- Grind `fresh`',
      '- Use water at 94 °C',
      '  1. Nested step',
      '',
      '```',
      'ratio = 1:16',
      '```',
      '',
      '| Size | Price |',
      '| --- | --- |',
      '| Small | 2.50 |',
      '',
      '> Quoted wisdom.',
    ].join('\n');
    const doc = await parseFile(text(markdown), 'markdown');
    expect(doc.title).toBe('Coffee guide');
    expect(doc.blocks).toEqual<Block[]>([
      { kind: 'heading', level: 1, text: 'Coffee guide' },
      { kind: 'paragraph', text: 'Our beans come from small farms in Colombia & Peru.' },
      { kind: 'heading', level: 2, text: 'Brewing' },
      { kind: 'list_item', text: 'Grind fresh' },
      { kind: 'list_item', text: 'Use water at 94 °C' },
      { kind: 'list_item', text: 'Nested step' },
      { kind: 'code', text: 'ratio = 1:16' },
      { kind: 'table', text: 'Size | Price\nSmall | 2.50' },
      { kind: 'paragraph', text: 'Quoted wisdom.' },
    ]);
  });
});

describe('HTML', () => {
  const page = `<!doctype html><html><head><title>Contact us | Bella Pasta</title>
    <script>window.tracking = "do not index me";</script><style>body { color: red }</style></head>
    <body>
      <header><nav><a href="/">Home</a> <a href="/menu">Menu</a> <a href="/contact">Contact</a></nav></header>
      <main>
        <h1>Contact us</h1>
        <p>We are at <strong>12 Via Roma</strong>, Springfield.<br>Parking is behind the building.</p>
        <h2>Opening hours</h2>
        <ul><li>Monday to Friday: 9 to 17</li><li>Saturday: 10 to 14</li></ul>
        <p>Call us on 555 0100 to book a table for more than eight people, and tell us about allergies.</p>
      </main>
      <footer>© 2026 Bella Pasta · Privacy policy · Terms of use</footer>
      <script>console.log("bye")</script>
    </body></html>`;

  it('keeps the main content and drops navigation, footer, scripts and styles', () => {
    const doc = parseHtml(page, 'https://bella.example/contact');
    expect(doc.title).toBe('Contact us');
    const all = doc.blocks.map((block) => block.text).join('\n');
    expect(all).not.toMatch(/Home|Menu|Privacy|tracking|bye|color/);
    expect(doc.blocks).toContainEqual({ kind: 'paragraph', text: 'We are at 12 Via Roma, Springfield.\nParking is behind the building.' });
    expect(doc.blocks).toContainEqual({ kind: 'heading', level: 2, text: 'Opening hours' });
    expect(doc.blocks.filter((block) => block.kind === 'list_item').map((block) => block.text)).toEqual(['Monday to Friday: 9 to 17', 'Saturday: 10 to 14']);
  });

  it('reads an article page through readability: sidebars, menus and comment forms of any markup are dropped', () => {
    const paragraph = (topic: string) =>
      `<p>${topic} is something our bakery takes seriously, and every loaf that leaves the oven is checked by a baker who has worked with us for years, so that what reaches your table tastes the way it did yesterday.</p>`;
    const article = `<!doctype html><html><head><title>How we bake our bread - Bella Bakery</title></head><body>
      <div id="top-nav"><a href="/">Home</a> | <a href="/shop">Shop</a> | <a href="/blog">Blog</a></div>
      <div class="layout">
        <div class="content"><article>
          <h1>How we bake our bread</h1>
          ${paragraph('Sourdough')}${paragraph('Flour')}
          <h2>Our ovens</h2>
          ${paragraph('Heat')}
          <ol><li>Stone deck ovens</li><li>A wood-fired oven for <em>Saturdays</em></li></ol>
          <table><tr><th>Loaf</th><th>Price</th></tr><tr><td>Country</td><td>4.20</td></tr></table>
          ${paragraph('Timing')}
        </article></div>
        <div class="sidebar"><h3>Related posts</h3><a href="/a">Ten cakes</a><a href="/b">Cookies</a></div>
      </div>
      <div id="comments"><form><textarea>Leave a comment</textarea><button>Send</button></form></div>
      <div class="footer">Copyright Bella Bakery · Imprint</div>
      <script>trackEverything()</script>
    </body></html>`;
    const doc = parseHtml(article, 'https://bella.example/blog/bread');
    expect(doc.title).toBe('How we bake our bread');
    const all = doc.blocks.map((block) => block.text).join('\n');
    expect(all).not.toMatch(/Home|Related|Ten cakes|Leave a comment|Send|Copyright|trackEverything/);
    expect(doc.blocks).toContainEqual({ kind: 'heading', level: 2, text: 'Our ovens' });
    expect(doc.blocks).toContainEqual({ kind: 'list_item', text: 'A wood-fired oven for Saturdays' });
    expect(doc.blocks).toContainEqual({ kind: 'table', text: 'Loaf | Price\nCountry | 4.20' });
    expect(doc.blocks.filter((block) => block.kind === 'paragraph')).toHaveLength(4);
  });

  it('falls back to the body when there is little to read, still without the chrome', () => {
    const doc = parseHtml('<html><body><nav><a href="/">Home</a></nav><div><p>Open daily.</p></div><footer>Imprint</footer></body></html>', null);
    expect(doc.title).toBeNull();
    expect(doc.blocks).toEqual([{ kind: 'paragraph', text: 'Open daily.' }]);
  });

  it('reads a table used for layout as the blocks inside it, and decodes character references', () => {
    const doc = parseHtml('<html><head><title>Fish &amp; chips</title></head><body><table><tr><td><h2>Menu</h2><p>Cod &amp; chips, caf&eacute; au lait</p></td></tr></table></body></html>', null);
    expect(doc).toEqual({ title: 'Fish & chips', blocks: [{ kind: 'heading', level: 2, text: 'Menu' }, { kind: 'paragraph', text: 'Cod & chips, café au lait' }] });
  });

  it('takes the title from the page\'s own <h1>, never from a logo in the header', () => {
    const logo = '<header><h1>Bella Pasta</h1></header>';
    expect(parseHtml(`<html><head><title>Menu | Bella Pasta</title></head><body>${logo}<main><h1>Menu</h1><p>Soup.</p></main></body></html>`, null).title).toBe('Menu');
    expect(parseHtml(`<html><head><title>Contact us | Bella Pasta</title></head><body>${logo}<main><p>Call us.</p></main></body></html>`, null).title).toBe('Contact us | Bella Pasta');
    expect(parseHtml(`<html><body>${logo}<main><p>Call us.</p></main></body></html>`, null).title).toBe('Bella Pasta');
  });

  it('returns no blocks for a page without text, and an HTML upload without text fails', async () => {
    expect(parseHtml('<html><head><title>Empty</title></head><body><script>1</script></body></html>', null).blocks).toEqual([]);
    await documentError(() => parseFile(text('<html><body>  </body></html>'), 'html'));
  });
});

describe('plain text', () => {
  it('splits paragraphs on blank lines and honours Markdown headings', () => {
    const doc = parseText('FAQ', 'Intro line one\nline two\n\n\n## Delivery\nWe deliver on Tuesdays.\n\nAnd Fridays.');
    expect(doc).toEqual<ParsedDocument>({
      title: 'FAQ',
      blocks: [
        { kind: 'paragraph', text: 'Intro line one\nline two' },
        { kind: 'heading', level: 2, text: 'Delivery' },
        { kind: 'paragraph', text: 'We deliver on Tuesdays.' },
        { kind: 'paragraph', text: 'And Fridays.' },
      ],
    });
  });

  it('decodes UTF-8 (with a BOM) and Latin-1 uploads, and fails an empty one', async () => {
    expect((await parseFile(Uint8Array.from([0xef, 0xbb, 0xbf, ...text('Crème brûlée')]), 'text')).blocks).toEqual([{ kind: 'paragraph', text: 'Crème brûlée' }]);
    expect((await parseFile(Uint8Array.from([0x43, 0x72, 0xe8, 0x6d, 0x65]), 'text')).blocks).toEqual([{ kind: 'paragraph', text: 'Crème' }]);
    await documentError(() => parseFile(text(' \n\n \n'), 'text'));
  });

  it('bounds the text it returns with maxTextChars', async () => {
    const doc = await parseFile(text(Array.from({ length: 1000 }, (_, i) => `Paragraph number ${i} has a few words in it.`).join('\n\n')), 'text', { maxTextChars: 5000 });
    const total = doc.blocks.reduce((sum, block) => sum + block.text.length, 0);
    expect(total).toBeLessThanOrEqual(5000);
    expect(total).toBeGreaterThan(4000);
  });
});

/** A sentence-rich paragraph of about `length` characters. */
function prose(length: number, seed = 0): string {
  const words = ['coffee', 'roasted', 'beans', 'delivery', 'weekday', 'morning', 'customers', 'kitchen', 'fresh', 'bakery', 'opening', 'Springfield'];
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < length; i++) {
    const word = `${words[(i * 7 + seed) % words.length]}${i}`;
    const next = i % 9 === 8 ? `${word}.` : word;
    out.push(next);
    size += next.length + 1;
  }
  return out.join(' ');
}

describe('chunkDocument', () => {
  it('carries the heading path of each chunk and numbers chunks from 0', () => {
    const doc: ParsedDocument = {
      title: 'Guide',
      blocks: [
        { kind: 'paragraph', text: prose(400, 1) },
        { kind: 'heading', level: 1, text: 'Shop' },
        { kind: 'paragraph', text: prose(500, 2) },
        { kind: 'heading', level: 2, text: 'Returns' },
        { kind: 'paragraph', text: prose(600, 3) },
        { kind: 'heading', level: 1, text: 'Café' },
        { kind: 'heading', level: 3, text: 'Menu' },
        { kind: 'paragraph', text: prose(700, 4) },
      ],
    };
    const chunks = chunkDocument(doc);
    expect(chunks.map((chunk) => chunk.headingPath)).toEqual([[], ['Shop'], ['Shop', 'Returns'], ['Café', 'Menu']]);
    expect(chunks.map((chunk) => chunk.position)).toEqual([0, 1, 2, 3]);
    expect(chunks[2]?.content).toBe(prose(600, 3));
  });

  it('splits a long section within the size bound, on word boundaries, overlapping a little', () => {
    const long = Array.from({ length: 6 }, (_, i) => prose(900, i)).join('\n\n');
    const doc: ParsedDocument = { title: null, blocks: [{ kind: 'heading', level: 2, text: 'History' }, ...long.split('\n\n').map((p) => ({ kind: 'paragraph' as const, text: p }))] };
    const chunks = chunkDocument(doc, { maxChars: 1200, overlapChars: 150 });
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    const sourceWords = new Set(long.split(/\s+/));
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.headingPath).toEqual(['History']);
      expect(chunk.content.length).toBeLessThanOrEqual(1200);
      expect(chunk.content.length).toBeGreaterThan(300);
      // Never a word cut in two: every word of a chunk is a word of the text.
      for (const word of chunk.content.split(/\s+/)) expect(sourceWords.has(word)).toBe(true);
      const next = chunks[i + 1];
      if (next) {
        // The next chunk starts with the last ~150 characters of this one.
        const overlap = next.content.slice(0, 200).split(/\s+/).slice(0, 3).join(' ');
        const tail = chunk.content.slice(-250);
        expect(tail).toContain(overlap);
      }
    }
    // Nothing is lost: every word of the text is in some chunk.
    const covered = new Set(chunks.flatMap((chunk) => chunk.content.split(/\s+/)));
    for (const word of sourceWords) expect(covered.has(word)).toBe(true);
  });

  it('splits a paragraph longer than a chunk at sentence or word ends, and even a giant token', () => {
    const doc: ParsedDocument = { title: null, blocks: [{ kind: 'paragraph', text: `${prose(5000, 7)} ${'x'.repeat(3000)}` }] };
    const chunks = chunkDocument(doc, { maxChars: 1000, overlapChars: 100 });
    for (const chunk of chunks) expect(chunk.content.length).toBeLessThanOrEqual(1000);
    expect(chunks.map((chunk) => chunk.content).join('')).toContain('x'.repeat(500));
    expect(chunks.length).toBeGreaterThanOrEqual(8);
  });

  it('merges tiny sections with their neighbours under the same heading, keeping their headings in the text', () => {
    const doc: ParsedDocument = {
      title: 'Contact',
      blocks: [
        { kind: 'heading', level: 1, text: 'Contact' },
        { kind: 'heading', level: 2, text: 'Phone' },
        { kind: 'paragraph', text: '555 0100' },
        { kind: 'heading', level: 2, text: 'Email' },
        { kind: 'paragraph', text: 'hello@bella.example' },
        { kind: 'heading', level: 2, text: 'Address' },
        { kind: 'list_item', text: '12 Via Roma' },
        { kind: 'list_item', text: 'Springfield' },
        { kind: 'heading', level: 1, text: 'Story' },
        { kind: 'paragraph', text: prose(900, 5) },
      ],
    };
    const chunks = chunkDocument(doc);
    expect(chunks).toEqual([
      { position: 0, headingPath: ['Contact'], content: 'Phone\n555 0100\n\nEmail\nhello@bella.example\n\nAddress\n- 12 Via Roma\n- Springfield' },
      { position: 1, headingPath: ['Story'], content: prose(900, 5) },
    ]);
  });

  it('returns no chunks for a document without text', () => {
    expect(chunkDocument({ title: 'Empty', blocks: [{ kind: 'heading', level: 1, text: 'Nothing here' }] })).toEqual([]);
  });
});
