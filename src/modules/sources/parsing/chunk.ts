import type { Block, ParsedDocument } from './types.js';

/** A piece of a document to index and retrieve: its place, the headings above it, its text. */
export interface Chunk { position: number; headingPath: string[]; content: string }

/** Options of chunkDocument: the size aimed at and the overlap between the parts of a split section, in characters. */
export interface ChunkOptions { maxChars?: number; overlapChars?: number }

const DEFAULT_MAX_CHARS = 1200;
const DEFAULT_OVERLAP_CHARS = 150;

type BodyKind = Exclude<Block['kind'], 'heading'>;
/** A section: the blocks under one heading (up to the next heading), with the path of headings above them. */
interface Section { path: string[]; units: { kind: BodyKind; text: string }[] }
/** A piece of a section's text no longer than a chunk can take; `continues` when it carries on the previous piece's block. */
interface Piece { kind: BodyKind; text: string; continues: boolean }

/**
 * Chunks that follow the structure (headings, paragraphs, list items), ~maxChars each (default 1200),
 * overlapping by ~overlapChars (default 150) when a section is split; each carries its heading path.
 * Tiny sections (under a quarter of maxChars) merge with their neighbours under the same heading; the
 * merged chunk carries the shared path and keeps the sub-headings in its text. Words are never cut, except
 * a single "word" longer than a chunk.
 */
export function chunkDocument(doc: ParsedDocument, options: ChunkOptions = {}): Chunk[] {
  const maxChars = Math.max(100, options.maxChars ?? DEFAULT_MAX_CHARS);
  const overlapChars = Math.min(Math.max(0, options.overlapChars ?? DEFAULT_OVERLAP_CHARS), Math.floor(maxChars / 3));
  const tinyChars = Math.floor(maxChars / 4);
  const chunks: Chunk[] = [];
  const emit = (headingPath: string[], content: string) => chunks.push({ position: chunks.length, headingPath, content });

  let group: Section[] = [];
  let groupSize = 0;
  const flushGroup = () => {
    if (group.length === 1 && group[0]) {
      for (const content of splitSection(group[0], maxChars, overlapChars)) emit(group[0].path, content);
    } else if (group.length > 1) {
      const path = commonPath(group.map((section) => section.path));
      emit(path, renderGroup(group, path));
    }
    group = [];
  };
  for (const section of sectionsOf(doc.blocks)) {
    const size = renderUnits(section.units).length;
    let merged: number | null = null;
    if (group.length > 0 && (groupSize < tinyChars || size < tinyChars) && size < maxChars) {
      const candidate = [...group, section];
      const path = commonPath(candidate.map((member) => member.path));
      if (related(commonPath(group.map((member) => member.path)), section.path)) merged = renderGroup(candidate, path).length;
    }
    if (merged !== null && merged <= maxChars) {
      groupSize = merged;
    } else {
      flushGroup();
      groupSize = size;
    }
    group.push(section);
  }
  flushGroup();
  return chunks;
}

/** The document's sections in order; a heading closes the sections of its level and deeper. */
function sectionsOf(blocks: Block[]): Section[] {
  const sections: Section[] = [];
  const headings: { level: number; text: string }[] = [];
  let current: Section = { path: [], units: [] };
  for (const block of blocks) {
    if (block.kind === 'heading') {
      if (current.units.length > 0) sections.push(current);
      while (headings.length > 0 && (headings[headings.length - 1]?.level ?? 0) >= block.level) headings.pop();
      headings.push({ level: block.level, text: block.text });
      current = { path: headings.map((heading) => heading.text), units: [] };
    } else if (block.text.trim()) {
      current.units.push({ kind: block.kind, text: block.kind === 'list_item' ? `- ${block.text}` : block.text });
    }
  }
  if (current.units.length > 0) sections.push(current);
  return sections;
}

/** Sections merge when one is a sibling or the parent of the other, under at least one shared heading. */
function related(groupPath: string[], path: string[]): boolean {
  const shared = commonPath([groupPath, path]).length;
  return shared > 0 && shared >= path.length - 1 && shared >= groupPath.length - 1;
}

function commonPath(paths: string[][]): string[] {
  const [first = [], ...rest] = paths;
  let length = first.length;
  for (const path of rest) {
    let i = 0;
    while (i < length && i < path.length && path[i] === first[i]) i++;
    length = i;
  }
  return first.slice(0, length);
}

/** Merged sections: each under its own headings below the shared path. */
function renderGroup(group: Section[], path: string[]): string {
  return group
    .map((section) => {
      const subHeadings = section.path.slice(path.length).join(' > ');
      const body = renderUnits(section.units);
      return subHeadings ? `${subHeadings}\n${body}` : body;
    })
    .join('\n\n');
}

function renderUnits(units: Section['units']): string {
  return units.map((unit, i) => (i === 0 ? '' : separator(units[i - 1]?.kind, unit.kind, false)) + unit.text).join('');
}

/** List items stay on consecutive lines; other blocks are separated by a blank line; a split block by a space. */
function separator(previous: BodyKind | undefined, next: BodyKind, continues: boolean): string {
  if (continues) return ' ';
  return previous === 'list_item' && next === 'list_item' ? '\n' : '\n\n';
}

/** A section's text in chunks of at most maxChars; each chunk after the first begins with the end of the one before. */
function splitSection(section: Section, maxChars: number, overlapChars: number): string[] {
  const pieceChars = maxChars - overlapChars - 2;
  const pieces: Piece[] = section.units.flatMap((unit) => unit.kind === 'table'
    ? splitTable(unit.text, pieceChars).map((text) => ({ kind: unit.kind, text, continues: false }))
    : splitText(unit.text, pieceChars).map((text, i) => ({ kind: unit.kind, text, continues: i > 0 })));
  const chunks: string[] = [];
  let current = '';
  let previousKind: BodyKind | undefined;
  for (const piece of pieces) {
    const join = current ? separator(previousKind, piece.kind, piece.continues) : '';
    if (current && current.length + join.length + piece.text.length > maxChars) {
      chunks.push(current);
      // A table's part carries its header row: an overlap of the rows before it would only repeat them.
      const overlap = piece.kind === 'table' ? '' : tail(current, overlapChars);
      current = overlap ? overlap + separator(previousKind, piece.kind, piece.continues) + piece.text : piece.text;
    } else {
      current += join + piece.text;
    }
    previousKind = piece.kind;
  }
  if (current) chunks.push(current);
  return chunks;
}

/**
 * A table cut into parts of whole rows of at most maxChars, each part under the table's header row (its first), so
 * "Tandem | £40" is never read without "Bike | Day". A row longer than a part is cut as text.
 */
function splitTable(text: string, maxChars: number): string[] {
  const [header = '', ...rows] = text.split('\n');
  if (text.length <= maxChars || rows.length === 0) return splitText(text, maxChars);
  const parts: string[] = [];
  let current = header;
  for (const row of rows.flatMap((line) => splitText(line, Math.max(1, maxChars - header.length - 1)))) {
    if (current !== header && current.length + 1 + row.length > maxChars) {
      parts.push(current);
      current = header;
    }
    current += `\n${row}`;
  }
  if (current !== header) parts.push(current);
  return parts;
}

/** Text cut into pieces of at most maxChars: at a sentence end when one is in the second half, else at a space. */
function splitText(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars + 1);
    let cut = lastMatchEnd(window, /[.!?…](?=\s)/g);
    if (cut < maxChars / 2) cut = window.search(/\s\S*$/);
    if (cut <= 0) cut = maxChars; // one word longer than a chunk: nothing else to do
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

function lastMatchEnd(text: string, pattern: RegExp): number {
  let end = -1;
  for (const match of text.matchAll(pattern)) end = match.index + match[0].length;
  return end;
}

/** The end of a chunk, about overlapChars long, starting at a sentence (or else a word) boundary; '' when there is none. */
function tail(text: string, overlapChars: number): string {
  const from = text.length - overlapChars;
  if (from <= 0) return '';
  const window = text.slice(from);
  const sentence = window.search(/[.!?…]\s+\S/);
  if (sentence >= 0 && window.length - sentence > overlapChars / 3) return window.slice(sentence + 1).trim();
  const space = window.search(/\s/);
  return space >= 0 ? window.slice(space).trim() : '';
}
