import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { csvRow } from '../../lib/csv.js';
import type { TranscriptMessage } from './repository.js';
import type { ConversationView } from './schema.js';

/** A message as the export writes it. */
export type ExportedMessage = Omit<TranscriptMessage, 'conversation_id'>;

/** A conversation with its whole transcript (one JSON Lines line). */
export type ExportedConversation = ConversationView & { messages: ExportedMessage[] };

/** An export ready to send: its media type, a file name, and its text produced lazily, line by line. */
export interface ExportFile {
  mediaType: string;
  filename: string;
  lines: AsyncIterable<string>;
}

const CSV_COLUMNS = [
  'conversation_id', 'chatbot_id', 'status', 'mode', 'channel', 'origin', 'visitor_id', 'visitor_name', 'visitor_email', 'lead_id',
  'conversation_created_at', 'handoff_requested_at', 'message_id', 'message_role', 'message_author_type', 'message_content', 'message_created_at',
];

function csvLines(c: ExportedConversation): string {
  const columns = [c.id, c.chatbot_id, c.status, c.mode, c.channel, c.origin, c.visitor.id, c.visitor.name, c.visitor.email, c.lead_id, c.created_at, c.handoff_requested_at];
  // A conversation without messages still gets its row, so the export lists every conversation.
  if (c.messages.length === 0) return `${csvRow([...columns, null, null, null, null, null])}\r\n`;
  return c.messages.map((m) => `${csvRow([...columns, m.id, m.role, m.author_type, m.content, m.created_at])}\r\n`).join('');
}

/** Formats conversations as JSON Lines (one conversation per line) or CSV (one row per message). */
export function exportFile(conversations: AsyncIterable<ExportedConversation>, format: 'jsonl' | 'csv', day: string): ExportFile {
  const csv = format === 'csv';
  async function* lines(): AsyncGenerator<string> {
    if (csv) yield `${csvRow(CSV_COLUMNS)}\r\n`;
    for await (const conversation of conversations) yield csv ? csvLines(conversation) : `${JSON.stringify(conversation)}\n`;
  }
  return {
    mediaType: csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
    filename: `conversations-${day}.${csv ? 'csv' : 'jsonl'}`,
    lines: lines(),
  };
}

/**
 * Sends an export as an attachment. The stream pulls the next line only when the socket has taken the last
 * ones, so a slow reader holds the export at the page it is reading instead of the server buffering it all.
 */
export function sendExport(reply: FastifyReply, file: ExportFile) {
  return reply
    .type(file.mediaType)
    .header('Content-Disposition', `attachment; filename="${file.filename}"`)
    .send(Readable.from(file.lines));
}
