import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { markdownTable, type BenchReport } from './report.js';

// `npx tsx bench/markdown.ts bench/results/<file>.json [--connections 10] [--all]`: a result file as the
// compact Markdown table of docs/performance.md (`markdownTable`): every level, or only the one given; the
// rows the page keeps, or with --all every scenario.
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { connections: { type: 'string' }, all: { type: 'boolean', default: false } },
});
if (positionals.length !== 1) {
  console.error('usage: npx tsx bench/markdown.ts <result file> [--connections N] [--all]');
  process.exit(2);
}
const report = JSON.parse(fs.readFileSync(positionals[0]!, 'utf8')) as BenchReport;
console.log(markdownTable(report, { all: values.all!, ...(values.connections ? { connections: Number(values.connections) } : {}) }));
