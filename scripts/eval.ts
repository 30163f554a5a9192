import fs from 'node:fs';
import { markdownTable, missLines, targetMisses, TARGETS } from '../eval/metrics.js';
import { answerTable, answerTargetMisses } from '../eval/answers.js';
import { embeddingsConfigured, FULL_TEXT, LOCAL_EMBEDDINGS_MODEL, runEvaluation } from '../eval/run.js';

// npm run eval [-- --smoke] [-- --no-hybrid] [-- --json results.json] [-- --misses]
// The retrieval evaluation of issue 30 (see eval/run.ts): a fresh database (a temp SQLite file, or a schema of
// TEST_DATABASE_URL when set), the fixture business ingested through the public API, then every question asked
// of knowledge/search. Prints recall@1, recall@5 and MRR per mode, language and kind as a Markdown table,
// then the builtin provider's answers (issue 31: fact stated, source cited, declines, small talk, length) and,
// when LLM_PROVIDER configures a model provider, that provider's answers too; exits 1 when full text or the
// builtin answers miss the issues' targets.
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const jsonIndex = args.indexOf('--json');
const jsonTarget = jsonIndex === -1 ? null : args[jsonIndex + 1];
const showMisses = args.includes('--misses');

const runs = await runEvaluation({ smoke, noHybrid: args.includes('--no-hybrid'), env: process.env, log: (line) => console.error(line) });
const database = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
const [first] = runs;
console.log(`\nRetrieval evaluation${smoke ? ' (smoke)' : ''} on ${database}: ${first?.report.results.length ?? 0} questions, ${first?.report.overall.count ?? 0} answerable\n`);
console.log(markdownTable(runs.map((run) => run.report)));
if (!smoke) {
  console.log(embeddingsConfigured(process.env)
    ? `hybrid: embeddings from ${process.env.EMBEDDINGS_MODEL ?? 'text-embedding-3-small'} (EMBEDDINGS_PROVIDER)`
    : `hybrid: embeddings from the local server (${LOCAL_EMBEDDINGS_MODEL}: English word vectors; set EMBEDDINGS_PROVIDER for a real model)`);
}
for (const run of runs) {
  const failed = run.websiteDocuments.filter((document) => document.status !== 'ready');
  console.log(`${run.report.mode}: ingestion took ${run.ingestSeconds.toFixed(1)} s; the website source has ${run.websiteDocuments.length} documents`
    + (failed.length ? ` (not ready: ${failed.map((document) => `${document.path} ${document.status}: ${document.error ?? ''}`).join('; ')})` : ''));
  if (showMisses) console.log(`\n${run.report.mode} — gold not first:\n${missLines(run.report).join('\n')}`);
}
const fullText = runs.find((run) => run.report.mode === FULL_TEXT);
const misses = fullText ? targetMisses(fullText.report, { perLanguage: !smoke }) : [];
console.log(`\ntargets (full text, ${smoke ? 'all smoke questions' : 'every language'}: recall@5 ≥ ${TARGETS.recallAt5}, MRR ≥ ${TARGETS.mrr}): ${misses.length ? `NOT MET — ${misses.join('; ')}` : 'met'}`);
const hybrid = runs.find((run) => run.report.mode !== FULL_TEXT);
if (fullText && hybrid) {
  const better = hybrid.report.overall.mrr > fullText.report.overall.mrr && hybrid.report.overall.recallAt5 >= fullText.report.overall.recallAt5;
  console.log(`hybrid better than full text alone (higher MRR, recall@5 no lower): ${better ? 'yes' : 'NO'}`);
  if (!better) misses.push('hybrid not better than full text');
}
// The builtin provider's answers (with the issue's targets), then a configured model provider's (LLM_PROVIDER).
for (const answers of [fullText?.answers, fullText?.modelAnswers]) {
  if (!answers) continue;
  console.log(`\nAnswers of the ${answers.provider === 'builtin' ? 'builtin provider' : `model provider ${answers.provider}`} (${answers.results.length} questions and turns)\n`);
  console.log(answerTable(answers));
  const streamed = answers.overall.streamed;
  console.log(`\nstreamed: ${Math.round(streamed * 1000) / 10} % of the answers arrived as pieces that add up to the stored answer`);
  if (answers.provider === 'builtin') {
    const answerMisses = answerTargetMisses(answers);
    console.log(`targets (answers: fact ≥ 85 %, source ≥ 90 % of those, declined ≥ 95 %, every turn handled, median < 60 words, languages within 10 points): ${answerMisses.length ? `NOT MET — ${answerMisses.join('; ')}` : 'met'}`);
    misses.push(...answerMisses);
  }
  if (showMisses) {
    for (const result of answers.results.filter((entry) => entry.factStated === false || entry.declined === false || entry.handled === false || entry.sourceCited === false)) {
      console.log(`- ${result.id} [${result.kind}] ${result.question}\n    → (${result.outcome}) ${result.answer.replace(/\s+/g, ' ').slice(0, 200)}`);
    }
  }
}
if (misses.length) process.exitCode = 1;
if (jsonTarget) {
  fs.writeFileSync(jsonTarget, `${JSON.stringify(runs, null, 2)}\n`);
  console.error(`wrote ${jsonTarget}`);
}
