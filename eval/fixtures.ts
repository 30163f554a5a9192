/**
 * The business fixtures the evaluation runs: Spokesmith Cycles (eval/fixture, eval/questions.json), a bike
 * shop, and Larkfield Dental Care (eval/clinic), a dental clinic written from scratch afterwards by someone
 * who had not read the first fixture's questions nor the answerer's rules. Each is a website served locally,
 * uploaded files made from Markdown, Q&A pairs, text sources, questions and conversational turns.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConversationTurn } from './answers.js';
import { DOCUMENTS_DIR, FIXTURE_DOCUMENTS, type FixtureDocument } from './fixture/make-documents.js';
import { SITE_DIR } from './fixture/site-server.js';
import { loadQaPairs, loadQuestions, loadTextSource, SMOKE_QUESTION_IDS, type QaPair, type Question, type TextSource } from './questions.js';

/** A business the evaluation learns and questions. */
export interface BusinessFixture {
  /** Short name, as the tables and `--json` show it. */
  key: string;
  agent: { name: string; instructions: string };
  siteDir: string;
  /** The page the website source starts its crawl at. */
  startPath: string;
  documents: readonly FixtureDocument[];
  documentsDir: string;
  qaPairs: QaPair[];
  textSources: TextSource[];
  questions: Question[];
  turns: ConversationTurn[];
  /** The questions `--smoke` asks (none: the fixture is left out of the smoke run). */
  smokeQuestionIds: readonly string[];
}

const here = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** A Markdown file as a text source: its first heading is the title. */
function textSourceOf(file: string): TextSource {
  const [first, ...rest] = fs.readFileSync(file, 'utf8').split('\n');
  return { title: (first ?? '').replace(/^#\s*/, '').trim(), content: rest.join('\n').trim() };
}

/** The bike shop of the retrieval evaluation. */
export function spokesmithFixture(): BusinessFixture {
  return {
    key: 'spokesmith',
    agent: { name: 'Spokesmith Cycles assistant', instructions: 'Answer questions about Spokesmith Cycles from its knowledge.' },
    siteDir: SITE_DIR,
    startPath: '/index.html',
    documents: FIXTURE_DOCUMENTS,
    documentsDir: DOCUMENTS_DIR,
    qaPairs: loadQaPairs(),
    textSources: [loadTextSource()],
    questions: loadQuestions(),
    turns: readJson<ConversationTurn[]>(here('./conversation-turns.json')),
    smokeQuestionIds: SMOKE_QUESTION_IDS,
  };
}

const CLINIC_DIR = here('./clinic/');
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The dental clinic, in English and Spanish. */
export function clinicFixture(): BusinessFixture {
  const documentsDir = path.join(CLINIC_DIR, 'documents');
  return {
    key: 'larkfield',
    agent: { name: 'Larkfield Dental Care assistant', instructions: 'Answer patients\' questions about Larkfield Dental Care from its knowledge.' },
    siteDir: path.join(CLINIC_DIR, 'site'),
    startPath: '/index.html',
    documents: [
      { name: 'price-list.docx', source: 'price-list.md', kind: 'docx', mediaType: DOCX },
      { name: 'cuidados-extraccion.pdf', source: 'extraccion.md', kind: 'pdf', mediaType: 'application/pdf' },
    ],
    documentsDir,
    qaPairs: readJson<QaPair[]>(path.join(CLINIC_DIR, 'qa.json')),
    textSources: ['payment-plans.md', 'horario-verano.md'].map((name) => textSourceOf(path.join(documentsDir, name))),
    questions: readJson<Question[]>(path.join(CLINIC_DIR, 'questions.json')),
    turns: readJson<ConversationTurn[]>(path.join(CLINIC_DIR, 'conversation-turns.json')),
    smokeQuestionIds: [],
  };
}

/** Every business fixture, in the order the tables show them. */
export function businessFixtures(): BusinessFixture[] {
  return [spokesmithFixture(), clinicFixture()];
}
