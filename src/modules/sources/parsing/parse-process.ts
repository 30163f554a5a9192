/**
 * The parse sandbox's child process (started by sandbox.ts with a heap limit): reads one untrusted file or
 * page at a time and answers with its parsed document or why it could not be read. It exits when its
 * parent goes away, so a killed server leaves no parser behind.
 */
import { DocumentError, parseFile, type ParseOptions, type ParsedDocument, type FileKind } from './index.js';
import { pageLinks, type PageLinks } from './links.js';

/** What the parent asks: a document's blocks (its bytes, kind and the bounds of the parse), or a page's links. */
export type ParseRequest =
  | { id: number; task: 'document'; bytes: Uint8Array; kind: FileKind; options: ParseOptions }
  | { id: number; task: 'links'; bytes: Uint8Array; contentType: string | null; url: string };

/** What the child answers. */
export type ParseResponse =
  | { id: number; ok: true; result: ParsedDocument | PageLinks }
  | { id: number; ok: false; message: string; code: DocumentError['code'] };

async function answer(request: ParseRequest): Promise<ParseResponse> {
  try {
    const result = request.task === 'links'
      ? pageLinks(request.bytes, request.contentType, request.url)
      : await parseFile(request.bytes, request.kind, request.options);
    return { id: request.id, ok: true, result };
  } catch (error) {
    // Anything a parser throws on this input is the document's fault, not the service's.
    if (error instanceof DocumentError) return { id: request.id, ok: false, message: error.message, code: error.code };
    const detail = error instanceof Error ? error.message : String(error);
    return { id: request.id, ok: false, message: `The document could not be read (it may be corrupt): ${detail}`.slice(0, 500), code: 'unreadable' };
  }
}

process.on('message', (request: ParseRequest) => {
  void answer(request).then((response) => process.send?.(response));
});
process.on('disconnect', () => process.exit(0));
