import { describe, expect, it } from 'vitest';
import { chunkDocument, parseFile, parseHtml } from '../../src/modules/sources/parsing/index.js';
import { makeDocx } from '../helpers/documents.js';

// Structure that answers depend on: a table's rows (a Word table's cells hold paragraphs), a long table split
// under its header, and page furniture that sites write inside their content.

describe('tables', () => {
  it('reads a Word table as rows of cells, header first, not one cell per line', async () => {
    const docx = await makeDocx([{ paragraph: 'Prices:' }, { table: [['Bike', 'Day'], ['Tandem', '£40'], ['City bike', '£18']] }]);
    const doc = await parseFile(docx, 'docx');
    expect(doc.blocks).toEqual([{ kind: 'paragraph', text: 'Prices:' }, { kind: 'table', text: 'Bike | Day\nTandem | £40\nCity bike | £18' }]);
  });

  it('still reads a one-column table of paragraphs as the blocks it lays out', () => {
    const doc = parseHtml('<html><body><table><tr><td><p>We open at nine.</p><p>We close at six.</p></td></tr></table></body></html>', null);
    expect(doc.blocks).toEqual([{ kind: 'paragraph', text: 'We open at nine.' }, { kind: 'paragraph', text: 'We close at six.' }]);
  });

  it('splits a long table between whole rows, each part under the header row', () => {
    const rows = Array.from({ length: 60 }, (_, i) => `Model ${i + 1} | £${100 + i} | ${10 + i} kg`);
    const chunks = chunkDocument({ title: 'Bikes', blocks: [{ kind: 'table', text: ['Model | Price | Weight', ...rows].join('\n') }] }, { maxChars: 400 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      const lines = chunk.content.split('\n');
      expect(lines[0]).toBe('Model | Price | Weight');
      for (const line of lines.slice(1)) expect(line).toMatch(/^Model \d+ \| £\d+ \| \d+ kg$/);
    }
    expect(chunks.flatMap((chunk) => chunk.content.split('\n').slice(1))).toEqual(rows);
  });
});

describe('page furniture inside the content', () => {
  it('drops a "Related posts" section and what stands under it, up to the next heading of its level', () => {
    const paragraph = (text: string) => `<p>${text} Our shop has served riders in the harbour town since 2011, and every bike that leaves it is checked twice by the mechanic on duty.</p>`;
    const html = `<html><head><title>Our story</title></head><body><article><h1>Our story</h1>
      ${paragraph('Anna Berg founded the shop in 2011.')}${paragraph('She still builds wheels by hand.')}
      <h2>Related posts</h2><ul><li><a href="/a">How Tom founded the repair café</a></li><li><a href="/b">Ten winter rides</a></li></ul>
      <h2>Opening hours</h2>${paragraph('We open at nine.')}
      <h3>Sigue leyendo</h3><h2>Artículos relacionados</h2><p><a href="/c">Rutas de invierno</a></p>
      </article><div class="related-posts"><p>Who founded Spokes? Read the interview.</p></div></body></html>`;
    const text = parseHtml(html, null).blocks.map((block) => block.text).join('\n');
    expect(text).toContain('Anna Berg founded the shop in 2011.');
    expect(text).toContain('Opening hours');
    expect(text).toContain('We open at nine.');
    expect(text).not.toMatch(/Related posts|Tom founded|Ten winter rides|relacionados|Rutas de invierno|interview/);
  });
});
