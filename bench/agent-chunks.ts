import type { Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { newId } from '../src/lib/ids.js';
import { knowledgeChunks, type ChunkInput } from '../src/modules/knowledge/chunks.js';
import type { SyntheticText } from './text.js';

/** One active agent of its own workspace whose one source the benchmark fills with synthetic chunks. */
export interface BenchAgent {
  workspaceId: string;
  chatbotId: string;
  sourceId: string;
  /** Chunks stored so far. */
  readonly chunks: number;
  /** Adds chunks until the agent holds `size` (nothing when it already does), 1,000 per transaction. */
  growTo(size: number): Promise<void>;
}

/**
 * Creates the agent's rows directly (workspace, active chatbot), not through the services: their audit trail
 * is not what the knowledge benchmarks measure. Its chunks are English-like text from `text`
 * (`syntheticText`), stored through knowledgeChunks.insert as ingestion stores them.
 */
export async function createBenchAgent(db: Kysely<Database>, text: SyntheticText, name: string): Promise<BenchAgent> {
  const at = new Date().toISOString();
  const workspaceId = newId('workspace');
  const chatbotId = newId('chatbot');
  const sourceId = newId('source');
  await db.insertInto('workspaces').values({ id: workspaceId, name: `Bench ${name}`, created_at: at }).execute();
  // Lead capture as the service stores its default: the widget presents it (lead capture off, so the builtin
  // provider's "I don't know" asks for nothing).
  await db.insertInto('chatbots').values({
    id: chatbotId, workspace_id: workspaceId, name, description: null, status: 'active', instructions: 'x', welcome_message: null,
    model: null, temperature: null, knowledge: '[]', lead_capture: JSON.stringify({ enabled: false, fields: ['email'], prompt: null }), allowed_origins: '[]',
    metadata: '{}', created_at: at, updated_at: at, published_at: at,
  }).execute();
  let stored = 0;
  return {
    workspaceId,
    chatbotId,
    sourceId,
    get chunks() {
      return stored;
    },
    async growTo(size) {
      const added = size - stored;
      for (let start = 0; start < added; start += 1000) {
        const documentId = newId('document');
        const chunks: ChunkInput[] = Array.from({ length: Math.min(1000, added - start) }, (_, i) => ({
          workspaceId, chatbotId, sourceId, documentId, position: start + i,
          title: text.sentence(3), url: null, headingPath: [text.sentence(2)], content: text.paragraph(),
        }));
        await db.transaction().execute((trx) => knowledgeChunks.insert(trx, chunks));
      }
      stored = Math.max(stored, size);
    },
  };
}
