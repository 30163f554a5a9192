import { isProbablyReaderable, Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { blocksFromDom, withoutFurniture, type DomNode } from './dom-blocks.js';
import { collapseWhitespace, type Block, type ParsedDocument } from './types.js';

/** The parts of linkedom's document used here. */
interface PageDocument {
  title: string;
  body: DomNode | null;
  documentElement: DomNode;
  querySelector(selector: string): (DomNode & { getAttribute(name: string): string | null }) | null;
  querySelectorAll(selector: string): ArrayLike<unknown>;
}

/** Readability's cost grows faster than the page (over linkedom); larger pages are read by the plain walk. */
const MAX_ELEMENTS_FOR_READABILITY = 1500;
/** Below this share of the page's <main> text, readability is taken to have missed the content. */
const MIN_SHARE_OF_MAIN = 0.6;

/**
 * The main content of an HTML page (readability over linkedom; nav/scripts/boilerplate dropped), its title.
 * On a page too short for readability, or when it finds nothing (or clearly too little of the page's
 * <main>), the <main>, <article> or <body> is read instead, without navigation, header, footer, asides,
 * forms and elements named as such (class or id "nav", "footer", "sidebar", "related", …); in both, furniture
 * under its own heading ("Related posts", "You may also like") is dropped too. A page without text
 * gives no blocks (not an error: callers decide what an empty page means). Links are not kept, so the
 * page's URL is not needed to resolve them.
 */
export function parseHtml(html: string, _url: string | null): ParsedDocument {
  const page = loadPage(html);
  const main = page.querySelector('main, [role="main"]') ?? page.querySelector('article');
  const fallback = blocksFromDom(main ?? page.body ?? page.documentElement, { dropChrome: true });
  // Readability is made for articles; on a short page it may keep the menu and drop the text.
  const readable = page.querySelectorAll('*').length <= MAX_ELEMENTS_FOR_READABILITY && isProbablyReaderable(page as never);
  const article = readable ? readArticle(html) : null;
  const articleBlocks = article?.content ? blocksFromDom(article.content, { dropChrome: false }) : [];
  const useArticle = articleBlocks.length > 0 && (!main || textLength(articleBlocks) >= MIN_SHARE_OF_MAIN * textLength(fallback));
  return { title: pageTitle(page, article?.title ?? null), blocks: withoutFurniture(useArticle ? articleBlocks : fallback) };
}

function loadPage(html: string): PageDocument {
  return parseHTML(html).document as unknown as PageDocument;
}

/** Readability's article (it changes the document it reads, hence a document of its own). */
function readArticle(html: string): { title: string | null; content: DomNode | null } | null {
  const document = loadPage(html);
  try {
    const reader = new Readability(document as never, { serializer: (element) => element });
    const article = reader.parse();
    return article ? { title: article.title ?? null, content: (article.content as DomNode | null | undefined) ?? null } : null;
  } catch {
    // A page readability cannot handle: the plain walk still reads it.
    return null;
  }
}

/**
 * The page's own <h1> (the one in its main content first) when it is what the <title> starts with
 * ("Contact us | Bella Pasta"), else readability's title, else <title>, else the <h1>. A site's logo in an
 * <h1> matches only the end of the <title>, so it never becomes every page's title.
 */
function pageTitle(page: PageDocument, readabilityTitle: string | null): string | null {
  const h1 = collapseWhitespace((page.querySelector('main h1, [role="main"] h1, article h1') ?? page.querySelector('h1'))?.textContent ?? '');
  const titleTag = collapseWhitespace(page.title ?? '') || collapseWhitespace(page.querySelector('meta[property="og:title"]')?.getAttribute('content') ?? '');
  const titleStart = titleTag.split(TITLE_SEPARATOR)[0] ?? '';
  if (h1 && (!titleTag || titleStart.toLowerCase() === h1.toLowerCase() || titleTag.toLowerCase() === h1.toLowerCase())) return h1;
  return collapseWhitespace(readabilityTitle ?? '') || titleTag || h1 || null;
}

/** Between a page's name and the site's in a <title>. */
const TITLE_SEPARATOR = /\s+[|\-–—·:»/]\s+/;

function textLength(blocks: Block[]): number {
  return blocks.reduce((sum, block) => sum + block.text.length, 0);
}
