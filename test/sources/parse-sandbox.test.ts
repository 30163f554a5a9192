import mammoth from 'mammoth';
import { afterAll, describe, expect, it } from 'vitest';
import { DocumentError, parseFile } from '../../src/modules/sources/parsing/index.js';
import { createParseSandbox } from '../../src/modules/sources/parsing/sandbox.js';
import { makeDecoyDocx, makeDocx, makeDocxBomb, makeMinimalDocx, makePdf, makePdfBomb } from '../helpers/documents.js';

const MB = 1024 * 1024;

async function failure(work: () => Promise<unknown>): Promise<DocumentError> {
  const error = await work().then(() => null, (cause: unknown) => cause);
  expect(error).toBeInstanceOf(DocumentError);
  return error as DocumentError;
}

describe('archives every reader sees alike', () => {
  it('refuses a DOCX whose end record points at a decoy directory while the parser would read a hidden archive', async () => {
    const decoy = makeDecoyDocx(makeMinimalDocx('<w:p><w:r><w:t>The hidden archive speaks.</w:t></w:r></w:p>'));
    // The fixture is real: mammoth's reader shifts to the hidden archive.
    expect((await mammoth.convertToHtml({ buffer: decoy })).value).toContain('The hidden archive speaks.');
    const error = await failure(() => parseFile(decoy, 'docx'));
    expect(error.message).toMatch(/directory is not where its end record says/);
  });

  it('refuses bytes before or after the archive, and reads the same archive when it is regular', async () => {
    const docx = await makeDocx([{ paragraph: 'Opening hours: 9 to 5.' }]);
    expect((await parseFile(docx, 'docx')).blocks.map((block) => block.text)).toEqual(['Opening hours: 9 to 5.']);
    await failure(() => parseFile(Buffer.concat([Buffer.from('prefix bytes'), docx]), 'docx'));
    await failure(() => parseFile(Buffer.concat([docx, Buffer.from('trailing bytes')]), 'docx'));
  });

  it('counts the expansion while inflating, against the configured budget', async () => {
    const bomb = makeDocxBomb({ expandedMb: 45, lieAboutSize: true });
    const refused = await failure(() => parseFile(bomb, 'docx', { maxExpandedBytes: 25 * MB }));
    expect(refused.code).toBe('too_large_when_expanded');
    expect(refused.message).toMatch(/more than 25 MB/);
    const smaller = await failure(() => parseFile(makeDocxBomb({ expandedMb: 3 }), 'docx', { maxExpandedBytes: 2 * MB }));
    expect(smaller.code).toBe('too_large_when_expanded');
  });
});

describe('the parse sandbox', () => {
  const sandbox = createParseSandbox({ memoryMb: 256, timeoutMs: 30_000, maxExpandedBytes: 25 * MB, size: 2 });
  afterAll(() => sandbox.close());

  it('parses documents in a child process, the same as in process', async () => {
    const pdf = await makePdf([{ heading: 'Prices', paragraphs: ['A coffee is 2.50.'] }]);
    expect(await sandbox.parse(pdf, 'pdf')).toEqual(await parseFile(pdf, 'pdf'));
    const docx = await makeDocx([{ heading: 'Menu' }, { paragraph: 'Soup of the day.' }]);
    expect(await sandbox.parse(docx, 'docx')).toEqual(await parseFile(docx, 'docx'));
  });

  it('kills a parse past its memory and fails the document with too_large_when_expanded; the next parse works', { timeout: 60_000 }, async () => {
    // A 3 MB PDF whose one stream inflates to 3 GB: pdf.js keeps the whole stream in memory.
    const error = await failure(() => sandbox.parse(makePdfBomb(3000), 'pdf'));
    expect(error.code).toBe('too_large_when_expanded');
    expect(error.message).toMatch(/more than 256 MB of memory/);
    expect((await sandbox.parse(Buffer.from('Still reading.'), 'text')).blocks[0]?.text).toBe('Still reading.');
  });

  it('fails the decoy and the inflated DOCX with their reasons', async () => {
    expect((await failure(() => sandbox.parse(makeDecoyDocx(makeDocxBomb({ expandedMb: 300 })), 'docx'))).message).toMatch(/irregular ZIP archive/);
    expect((await failure(() => sandbox.parse(makeDocxBomb({ expandedMb: 45 }), 'docx'))).code).toBe('too_large_when_expanded');
  });

  it('kills a parse past its deadline with took_too_long', { timeout: 60_000 }, async () => {
    const quick = createParseSandbox({ memoryMb: 256, timeoutMs: 300, maxExpandedBytes: 25 * MB, size: 1 });
    try {
      // A 300 ms deadline is shorter than starting a parser and reading forty pages.
      const pages = Array.from({ length: 40 }, (_, page) => ({ paragraphs: Array.from({ length: 30 }, (__, line) => `Page ${page}, line ${line}: words to read.`) }));
      const error = await failure(async () => quick.parse(await makePdf(pages), 'pdf'));
      expect(error.code).toBe('took_too_long');
      expect(error.message).toMatch(/longer than 0\.3 s/);
    } finally {
      await quick.close();
    }
  });

  it('queues parses beyond its size and answers each', async () => {
    const texts = Array.from({ length: 6 }, (_, index) => sandbox.parse(Buffer.from(`Text number ${index}.`), 'text'));
    expect((await Promise.all(texts)).map((doc) => doc.blocks[0]?.text)).toEqual(Array.from({ length: 6 }, (_, index) => `Text number ${index}.`));
  });
});
