/**
 * The public benchmark's part of `npm run eval` (scripts/eval.ts): runs it, prints its tables and targets, and
 * tells whether the targets are met. They do not fail the run unless `strict` (the answerer is being
 * reworked; flip the default in scripts/eval.ts once it meets them).
 */
import { runSquadBenchmark, type SquadRun } from './benchmark.js';
import { squadConfidenceCurve, squadMissLines, squadSlices, squadTables, squadTargetLines } from './report.js';

/** Runs the public benchmark and prints it; returns the run and the targets it misses. */
export async function printSquadPart(options: { env: Record<string, string | undefined>; every: number; showMisses: boolean; log: (line: string) => void }): Promise<{ run: SquadRun; misses: string[] }> {
  const started = Date.now();
  const run = await runSquadBenchmark({ env: options.env, every: options.every, log: options.log });
  const database = options.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(`\n## Public benchmark: SQuAD 2.0 train subset (${database})\n`);
  console.log(`${run.results.length} questions${options.every > 1 ? ` (one in ${options.every})` : ''} over ${run.paragraphs} paragraphs; ingestion ${run.ingestSeconds.toFixed(1)} s, questions ${run.askSeconds.toFixed(1)} s, in all ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  const slices = squadSlices(run.results);
  console.log(squadTables(slices));
  const curve = squadConfidenceCurve(run.results);
  if (curve) console.log(`\nPrecision and coverage of answering above a confidence threshold (the first hit's \`confidence\`):\n\n${curve}`);
  const english = slices.find(([name]) => name === 'en')?.[1];
  const misses: string[] = [];
  if (english) {
    console.log('\ntargets (English):');
    for (const { target, met } of squadTargetLines(english)) {
      console.log(`- ${met ? 'met' : 'NOT MET'}: ${target}`);
      if (!met) misses.push(`SQuAD: ${target}`);
    }
  }
  if (options.showMisses) console.log(`\nfailure classes (first examples):\n${squadMissLines(run.results).join('\n')}`);
  return { run, misses };
}
