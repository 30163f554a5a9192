/**
 * Words that say nothing about what a visitor asks: a match on them alone is no match (so "hi" or
 * "what do you do?" do not pull up a random entry). English only, like the stemming of the index.
 */
const STOPWORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves im ive id ill youre dont doesnt didnt cant wont isnt arent whats
  thats theres hows whos wheres hi hello hey hiya howdy yo thanks thank thx ty please pls ok okay yes yeah yep nope
  bye goodbye cheers tell know want need like get got also much many well really something anything`
    .split(/\s+/)
    .filter(Boolean),
);

const MAX_TERMS = 32;
const MAX_TERM_LENGTH = 64;

/**
 * The searchable words of a visitor's text: lowercased, NFKC-normalised runs of letters and digits,
 * without stopwords or duplicates, at most 32. Nothing else survives (quotes, `*`, `:`, `-`, parentheses),
 * which is what makes building a full-text query from visitor text safe.
 */
export function searchTerms(text: string): string[] {
  // Apostrophes join a word ("don't" is "dont", a stopword) rather than split it.
  const words = text.normalize('NFKC').toLowerCase().replace(/['’]/g, '').match(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu) ?? [];
  const terms = new Set<string>();
  for (const plain of words) {
    if (plain.length > MAX_TERM_LENGTH || STOPWORDS.has(plain)) continue;
    // Single characters match too much to mean anything (except digits and CJK ideographs).
    if (plain.length === 1 && !/[\p{N}\p{Script=Han}]/u.test(plain)) continue;
    terms.add(plain);
    if (terms.size === MAX_TERMS) break;
  }
  return [...terms];
}
