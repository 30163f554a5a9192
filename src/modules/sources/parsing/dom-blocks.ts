import type { Block } from './types.js';

/** The few DOM members the walker uses (linkedom's nodes; the project compiles without the DOM library). */
export interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  getAttribute?(name: string): string | null;
}

const ELEMENT = 1;
const TEXT = 3;

/** Never content: scripts, styles, embedded media, form controls. */
const IGNORED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME', 'OBJECT', 'EMBED', 'HEAD',
  'BUTTON', 'SELECT', 'TEXTAREA', 'INPUT', 'OPTION', 'DIALOG', 'MAP', 'AUDIO', 'VIDEO', 'PICTURE', 'SOURCE', 'TRACK']);
/** Page chrome, dropped when the walker sees a whole page rather than readability's article. */
const CHROME = new Set(['NAV', 'FOOTER', 'ASIDE', 'HEADER', 'FORM']);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alert']);
/** Class or id words of chrome on sites that do not use the semantic elements ("menu" is left alone: restaurants). */
const CHROME_NAMES = /(?:^|[\s_-])(?:nav|navbar|navigation|footer|site-header|sidebar|breadcrumbs?|cookies?|cookie-banner|skip-link|related|share|sharing|social|newsletter|comments?)(?:$|[\s_-])/i;
/**
 * Headings of page furniture that sites write inside their content ("Related posts", "You may also like"): the
 * links under them are other pages' titles, never this page's facts. Five languages, matched whole (folded case).
 */
const FURNITURE_HEADINGS = new RegExp('^(?:' + [
  'related (?:posts|articles|pages|stories|content|reading)', 'you (?:may|might) also like', '(?:more|recent|latest|popular|other) (?:posts|articles|stories|news)',
  'read (?:more|next|also)', 'see also', 'share(?: this(?: (?:post|page|article))?)?', 'follow us', 'leave a (?:comment|reply)', 'comments?',
  '(?:art[ií]culos|entradas|publicaciones) relacionad[ao]s', 'tambi[eé]n te puede interesar', 'te puede interesar', 'comparte(?: esto)?', 's[ií]guenos',
  'articles (?:similaires|li[eé]s|connexes)', '[àa] lire aussi', 'vous aimerez aussi', 'partager(?: cet article)?', 'suivez-nous',
  '[äa]hnliche (?:beitr[äa]ge|artikel)', 'das k[öo]nnte (?:sie|dich) auch interessieren', 'weitere (?:beitr[äa]ge|artikel)', 'teilen', 'folge(?:n sie)? uns',
  '(?:artigos|posts) relacionados', 'leia (?:tamb[eé]m|mais)', 'voc[eê] tamb[eé]m pode gostar', 'compartilh(?:e|ar)', 'siga-nos',
].join('|') + ')[\\s:.!?]*$', 'i');
const INLINE = new Set(['A', 'ABBR', 'B', 'BDI', 'BDO', 'CITE', 'CODE', 'DATA', 'DFN', 'EM', 'FONT', 'I', 'KBD', 'LABEL', 'MARK',
  'Q', 'S', 'SAMP', 'SMALL', 'SPAN', 'STRONG', 'SUB', 'SUP', 'TIME', 'U', 'VAR', 'WBR', 'DEL', 'INS', 'IMG', 'BR', 'TT', 'BIG', 'STRIKE']);
const HEADING = /^H([1-6])$/;

/**
 * The blocks without the page furniture written in the content: a heading such as "Related posts" and what stands
 * under it, up to the next heading of its level or above.
 */
export function withoutFurniture(blocks: readonly Block[]): Block[] {
  const kept: Block[] = [];
  let skipping: number | null = null;
  for (const block of blocks) {
    if (block.kind === 'heading' && skipping !== null && block.level <= skipping) skipping = null;
    if (skipping !== null) continue;
    if (block.kind === 'heading' && FURNITURE_HEADINGS.test(block.text.trim())) {
      skipping = block.level;
      continue;
    }
    kept.push(block);
  }
  return kept;
}

/** Options of the walk: dropChrome removes nav, header, footer, aside and forms (for whole pages). */
export interface WalkOptions { dropChrome: boolean }

/** The blocks of a DOM subtree: headings, paragraphs, list items, code and tables, in reading order. */
export function blocksFromDom(root: DomNode, options: WalkOptions): Block[] {
  const blocks: Block[] = [];
  let inline: string[] = [];
  const flush = () => {
    const text = tidyInline(inline.join(''));
    if (text) blocks.push({ kind: 'paragraph', text });
    inline = [];
  };
  const visit = (node: DomNode) => {
    if (node.nodeType === TEXT) {
      inline.push(sourceText(node));
      return;
    }
    if (node.nodeType !== ELEMENT || skipped(node, options)) return;
    const tag = node.nodeName.toUpperCase();
    if (INLINE.has(tag)) {
      inline.push(inlineText(node, options));
      return;
    }
    flush();
    const heading = HEADING.exec(tag);
    if (heading?.[1]) {
      const text = collapse(inlineText(node, options));
      if (text) blocks.push({ kind: 'heading', level: Number(heading[1]), text });
    } else if (tag === 'P') {
      push(blocks, 'paragraph', tidyInline(inlineText(node, options)));
    } else if (tag === 'LI' || tag === 'DT' || tag === 'DD') {
      listItem(node, blocks, options);
    } else if (tag === 'PRE') {
      push(blocks, 'code', (node.textContent ?? '').replace(/^\n+|\s+$/g, ''));
    } else if (tag === 'TABLE' && !isLayoutTable(node)) {
      push(blocks, 'table', tableText(node, options));
    } else {
      for (const child of Array.from(node.childNodes)) visit(child);
    }
    flush();
  };
  visit(root);
  flush();
  return blocks;
}

function push(blocks: Block[], kind: 'paragraph' | 'code' | 'table' | 'list_item', text: string) {
  if (text) blocks.push({ kind, text });
}

/** A list item's own text, then the blocks of what is nested in it (sub-lists, paragraphs). */
function listItem(node: DomNode, blocks: Block[], options: WalkOptions) {
  const own: string[] = [];
  const nested: DomNode[] = [];
  for (const child of Array.from(node.childNodes)) {
    const tag = child.nodeName.toUpperCase();
    if (child.nodeType === ELEMENT && (tag === 'UL' || tag === 'OL' || tag === 'DL' || tag === 'TABLE' || tag === 'PRE')) nested.push(child);
    else if (child.nodeType === TEXT) own.push(sourceText(child));
    else if (child.nodeType === ELEMENT && !skipped(child, options)) own.push(' ', inlineText(child, options), ' ');
  }
  push(blocks, 'list_item', tidyInline(own.join('')));
  for (const child of nested) blocks.push(...blocksFromDom(child, options));
}

/** Text of a subtree as running text: <br> as a line break, ignored elements left out. */
function inlineText(node: DomNode, options: WalkOptions): string {
  if (node.nodeType === TEXT) return sourceText(node);
  if (node.nodeType !== ELEMENT || skipped(node, options)) return '';
  const tag = node.nodeName.toUpperCase();
  if (tag === 'BR') return '\n';
  if (tag === 'IMG') return '';
  const parts = Array.from(node.childNodes).map((child) => inlineText(child, options));
  return INLINE.has(tag) ? parts.join('') : ` ${parts.join('')} `;
}

/** Rows as lines, cells separated by " | " (the first row is the header). */
function tableText(table: DomNode, options: WalkOptions): string {
  return rowsOf(table)
    .map((row) => cellsOf(row).map((cell) => collapse(inlineText(cell, options))))
    .filter((cells) => cells.some(Boolean))
    .map((cells) => cells.join(' | '))
    .join('\n');
}

/**
 * A table used for page layout, read as blocks instead: it holds headings, lists or tables, or paragraphs in a
 * single column. A data table's cells may hold paragraphs (a Word table's always do: mammoth writes a <p> per
 * cell), and its rows stay rows.
 */
function isLayoutTable(node: DomNode): boolean {
  const holds = (current: DomNode, tags: RegExp): boolean =>
    Array.from(current.childNodes).some((child) => child.nodeType === ELEMENT && (tags.test(child.nodeName) || holds(child, tags)));
  if (holds(node, /^(H[1-6]|UL|OL|TABLE|PRE|BLOCKQUOTE)$/i)) return true;
  return holds(node, /^P$/i) && Math.max(0, ...rowsOf(node).map((row) => cellsOf(row).length)) <= 1;
}

/** The rows of a table (in its head, bodies and foot). */
function rowsOf(table: DomNode): DomNode[] {
  return Array.from(table.childNodes).filter((child) => child.nodeType === ELEMENT).flatMap((child) => {
    const tag = child.nodeName.toUpperCase();
    if (tag === 'TR') return [child];
    return tag === 'THEAD' || tag === 'TBODY' || tag === 'TFOOT' ? rowsOf(child) : [];
  });
}

/** The cells of a row. */
const cellsOf = (row: DomNode): DomNode[] => Array.from(row.childNodes).filter((cell) => cell.nodeType === ELEMENT && /^T[DH]$/i.test(cell.nodeName));

function skipped(node: DomNode, options: WalkOptions): boolean {
  const tag = node.nodeName.toUpperCase();
  if (IGNORED.has(tag)) return true;
  if (node.getAttribute?.('hidden') !== null && node.getAttribute?.('hidden') !== undefined) return true;
  if (node.getAttribute?.('aria-hidden') === 'true') return true;
  if (!options.dropChrome) return false;
  if (CHROME.has(tag) || CHROME_ROLES.has(node.getAttribute?.('role') ?? '')) return true;
  return CHROME_NAMES.test(`${node.getAttribute?.('class') ?? ''} ${node.getAttribute?.('id') ?? ''}`);
}

/** A text node's text; its line breaks are source formatting, not content (<br> is). */
function sourceText(node: DomNode): string {
  return (node.textContent ?? '').replace(/\s+/g, ' ');
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Inline text tidied: spaces collapsed within lines, the line breaks of <br> kept. */
function tidyInline(text: string): string {
  return text
    .replace(/[^\S\n]+/g, ' ')
    .split(/ ?\n ?/)
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
}
