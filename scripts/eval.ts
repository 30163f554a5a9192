import fs from 'node:fs';
import { markdownTable, missLines, targetMisses, TARGETS } from '../eval/metrics.js';
import { answerTable, answerTargetMisses, type AnswerReport } from '../eval/answers.js';
import { embeddingsConfigured, FULL_TEXT, LOCAL_EMBEDDINGS_MODEL, runEvaluation, type ModeRun } from '../eval/run.js';
import { printSquadPart } from '../eval/squad/main.js';

// npm run eval [-- --business | --squad] [-- --smoke] [-- --no-hybrid] [-- --json results.json] [-- --misses]
//              [-- --squad-every N] [-- --strict]
// Two parts (docs/evaluation.md), both by default:
// - business: each business fixture (a bike shop, a dental clinic) learnt through the public API on a fresh
//   database, its questions asked of knowledge/search (recall@1, recall@5, MRR per mode, language and kind),
//   then answered by the builtin provider (fact stated, source cited, out of scope declined, small talk, length)
//   and, when LLM_PROVIDER configures a model provider, by that provider too;
// - squad: the public benchmark, a SQuAD 2.0 train subset (retrieval beside BM25, replies).
// The bike shop's targets fail the run (exit 1) as before. The dental clinic's and the public benchmark's are
// printed as met / NOT MET and fail the run only with --strict.
// TODO(lead): once the reworked answerer meets them, make `strict` the default (drop the flag).
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const jsonIndex = args.indexOf('--json');
const jsonTarget = jsonIndex === -1 ? null : args[jsonIndex + 1];
const everyIndex = args.indexOf('--squad-every');
const squadEvery = everyIndex === -1 ? 1 : Number(args[everyIndex + 1]);
const showMisses = args.includes('--misses');
const strict = args.includes('--strict');
const onlySquad = args.includes('--squad') && !args.includes('--business');
const onlyBusiness = args.includes('--business') && !args.includes('--squad');
/** The fixture whose targets always gate the run (the others gate it with --strict). */
const GATING_FIXTURE = 'spokesmith';

const log = (line: string) => console.error(line);
const gating: string[] = [];
const reported: string[] = [];
const output: { business?: ModeRun[]; squad?: unknown } = {};
const percent = (value: number) => `${Math.round(value * 1000) / 10} %`;

if (!onlySquad) {
  const runs = await runEvaluation({ smoke, noHybrid: args.includes('--no-hybrid'), env: process.env, log });
  output.business = runs;
  const database = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  const fixtures = [...new Set(runs.map((run) => run.fixture))];
  for (const fixture of fixtures) {
    const fixtureRuns = runs.filter((run) => run.fixture === fixture);
    const [first] = fixtureRuns;
    const misses = fixture === GATING_FIXTURE ? gating : reported;
    console.log(`\n## Retrieval, ${fixture}${smoke ? ' (smoke)' : ''} on ${database}: ${first?.report.results.length ?? 0} questions, ${first?.report.overall.count ?? 0} answerable\n`);
    console.log(markdownTable(fixtureRuns.map((run) => run.report)));
    for (const run of fixtureRuns) {
      const failed = run.websiteDocuments.filter((document) => document.status !== 'ready');
      console.log(`${run.report.mode}: ingestion took ${run.ingestSeconds.toFixed(1)} s; the website source has ${run.websiteDocuments.length} documents`
        + (failed.length ? ` (not ready: ${failed.map((document) => `${document.path} ${document.status}: ${document.error ?? ''}`).join('; ')})` : ''));
      if (showMisses) console.log(`\n${run.report.mode} — gold not first:\n${missLines(run.report).join('\n')}`);
    }
    const fullText = fixtureRuns.find((run) => run.report.mode === FULL_TEXT);
    const retrievalMisses = fullText ? targetMisses(fullText.report, { perLanguage: !smoke }) : [];
    console.log(`\ntargets (full text, ${smoke ? 'all smoke questions' : 'every language'}: recall@5 ≥ ${TARGETS.recallAt5}, MRR ≥ ${TARGETS.mrr}): ${retrievalMisses.length ? `NOT MET — ${retrievalMisses.join('; ')}` : 'met'}`);
    misses.push(...retrievalMisses.map((miss) => `${fixture} retrieval: ${miss}`));
    const hybrid = fixtureRuns.find((run) => run.report.mode !== FULL_TEXT);
    if (fullText && hybrid) {
      const better = hybrid.report.overall.mrr > fullText.report.overall.mrr && hybrid.report.overall.recallAt5 >= fullText.report.overall.recallAt5;
      console.log(`hybrid better than full text alone (higher MRR, recall@5 no lower): ${better ? 'yes' : 'NO'}`);
      if (!better) misses.push(`${fixture}: hybrid not better than full text`);
    }
  }
  if (!smoke) {
    console.log(embeddingsConfigured(process.env)
      ? `\nhybrid: embeddings from ${process.env.EMBEDDINGS_MODEL ?? 'text-embedding-3-small'} (EMBEDDINGS_PROVIDER)`
      : `\nhybrid: embeddings from the local server (${LOCAL_EMBEDDINGS_MODEL}: English word vectors; set EMBEDDINGS_PROVIDER for a real model)`);
  }
  // The builtin provider's answers, every fixture side by side (with the targets), then a configured model provider's.
  const fullTextRuns = runs.filter((run) => run.report.mode === FULL_TEXT);
  for (const pick of [(run: ModeRun) => run.answers, (run: ModeRun) => run.modelAnswers]) {
    const reports = fullTextRuns.flatMap((run): [string, AnswerReport][] => { const report = pick(run); return report ? [[run.fixture, report]] : []; });
    if (reports.length === 0) continue;
    const provider = reports[0]![1].provider;
    console.log(`\n## Answers of the ${provider === 'builtin' ? 'builtin provider' : `model provider ${provider}`}\n`);
    console.log(answerTable(reports));
    for (const [fixture, report] of reports) {
      console.log(`\n${fixture}: streamed ${percent(report.overall.streamed)} of the answers as pieces that add up to the stored answer`);
      if (report.provider === 'builtin') {
        const answerMisses = answerTargetMisses(report);
        console.log(`${fixture} targets (fact ≥ 85 %, source ≥ 90 % of those, declined ≥ 95 %, every turn handled, median < 60 words, languages within 10 points): ${answerMisses.length ? `NOT MET — ${answerMisses.join('; ')}` : 'met'}`);
        (fixture === GATING_FIXTURE ? gating : reported).push(...answerMisses.map((miss) => `${fixture} answers: ${miss}`));
      }
      if (showMisses) {
        console.log(`\n${fixture} — misses:`);
        for (const result of report.results.filter((entry) => entry.factStated === false || entry.declined === false || entry.handled === false || entry.sourceCited === false)) {
          console.log(`- ${result.id} [${result.kind}] ${result.question}\n    → (${result.outcome}) ${result.answer.replace(/\s+/g, ' ').slice(0, 200)}`);
        }
      }
    }
  }
}

if (!onlyBusiness && !smoke) {
  const { run, misses } = await printSquadPart({ env: process.env, every: squadEvery, showMisses, log });
  output.squad = run;
  reported.push(...misses);
}

if (reported.length) console.log(`\nNOT MET (${strict ? 'failing the run: --strict' : 'reported only; --strict fails the run'}): ${reported.length} targets`);
if (gating.length || (strict && reported.length)) process.exitCode = 1;
if (jsonTarget) {
  fs.writeFileSync(jsonTarget, `${JSON.stringify(output, null, 2)}\n`);
  console.error(`wrote ${jsonTarget}`);
}
