import { marked, type Token, type Tokens } from 'marked';
import { blocksFromDom, type DomNode } from './dom-blocks.js';
import { parseHTML } from 'linkedom';
import { firstHeading } from './text.js';
import { collapseWhitespace, type Block, type ParsedDocument } from './types.js';

/** Markdown through marked's lexer: headings, paragraphs, list items, code, tables; inline markup reduced to text. */
export function parseMarkdown(markdown: string): ParsedDocument {
  const blocks: Block[] = [];
  addBlocks(marked.lexer(markdown), blocks);
  const h1 = blocks.find((block) => block.kind === 'heading' && block.level === 1)?.text;
  return { title: h1 ?? firstHeading(blocks), blocks };
}

function addBlocks(tokens: Token[], blocks: Block[]) {
  for (const token of tokens) {
    switch (token.type) {
      case 'heading': {
        const text = collapseWhitespace(inlineText((token as Tokens.Heading).tokens));
        if (text) blocks.push({ kind: 'heading', level: (token as Tokens.Heading).depth, text });
        break;
      }
      case 'paragraph':
      case 'text':
        push(blocks, 'paragraph', tidy(inlineText((token as Tokens.Paragraph).tokens ?? [token])));
        break;
      case 'list':
        for (const item of (token as Tokens.List).items) addListItem(item, blocks);
        break;
      case 'code':
        push(blocks, 'code', (token as Tokens.Code).text.replace(/\s+$/, ''));
        break;
      case 'table': {
        const table = token as Tokens.Table;
        const row = (cells: Tokens.TableCell[]) => cells.map((cell) => collapseWhitespace(inlineText(cell.tokens))).join(' | ');
        push(blocks, 'table', [row(table.header), ...table.rows.map(row)].join('\n'));
        break;
      }
      case 'blockquote':
        addBlocks((token as Tokens.Blockquote).tokens, blocks);
        break;
      case 'html': {
        const { document } = parseHTML(`<!doctype html><html><body>${(token as Tokens.HTML).text}</body></html>`);
        blocks.push(...blocksFromDom(document.body as unknown as DomNode, { dropChrome: true }));
        break;
      }
      default:
        // space, hr, def: nothing to read.
        break;
    }
  }
}

/** A list item's own text as one block, then its nested lists and other blocks. */
function addListItem(item: Tokens.ListItem, blocks: Block[]) {
  const own: string[] = [];
  const nested: Token[] = [];
  for (const token of item.tokens) {
    if (token.type === 'text' || token.type === 'paragraph') own.push(inlineText((token as Tokens.Text).tokens ?? [token]));
    else nested.push(token);
  }
  push(blocks, 'list_item', tidy(own.join('\n')));
  addBlocks(nested, blocks);
}

/** The readable text of inline tokens: emphasis, links and code spans reduced to their words. */
function inlineText(tokens: Token[]): string {
  return tokens.map((token) => {
    switch (token.type) {
      case 'br': return '\n';
      case 'image': return (token as Tokens.Image).text;
      case 'html': return '';
      case 'codespan': return decodeEntities((token as Tokens.Codespan).text);
      case 'escape': return (token as Tokens.Escape).text;
      default: {
        const children = (token as { tokens?: Token[] }).tokens;
        return children ? inlineText(children) : 'text' in token ? decodeEntities(String(token.text)) : '';
      }
    }
  }).join('');
}

const entityCache = new Map<string, string>();

/** Markdown keeps HTML character references (`&amp;`, `&eacute;`, `&#233;`) in its text; they stand for one character. */
function decodeEntities(text: string): string {
  return text.replace(/&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});/gi, (entity: string): string => {
    const cached = entityCache.get(entity);
    if (cached !== undefined) return cached;
    const decoded: string = parseHTML(`<!doctype html><html><body>${entity}</body></html>`).document.body.textContent ?? entity;
    if (entityCache.size < 1000) entityCache.set(entity, decoded);
    return decoded;
  });
}

function push(blocks: Block[], kind: 'paragraph' | 'list_item' | 'code' | 'table', text: string) {
  if (text) blocks.push({ kind, text });
}

/** Spaces collapsed within lines; hard line breaks kept. */
function tidy(text: string): string {
  return text.split('\n').map((line) => collapseWhitespace(line)).filter(Boolean).join('\n');
}
