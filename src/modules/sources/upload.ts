import { hash } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';
import type { Upload } from './service.js';

// The file of a multipart request, read before validation and handed to the handler beside the body.
const uploads = new WeakMap<FastifyRequest, Upload>();
// What each upload holds against its workspace's quotas while it is read and stored (released once its creation
// has judged the quota, or once answered or abandoned).
const admissions = new WeakMap<FastifyRequest, () => void>();

// Room left for the form around the file (boundary lines, part headers, the `title` field: at most 5 fields of
// 1,000 characters) when the file's size is judged from Content-Length before it is read.
const FORM_BYTES = 16 * 1024;
// Where a file of unknown size (a chunked request) starts; its buffer doubles as it grows.
const UNKNOWN_SIZE_START = 64 * 1024;

/** What an upload route needs: the file size limit, and the quota admission of a file of at most `fileBytes`. */
export interface UploadLimits {
  maxFileBytes: number;
  /** Refuses (409 quota_exceeded) a file that cannot fit, before its body is read; returns the release of what it holds. */
  admit(request: FastifyRequest, fileBytes: number): Promise<() => void>;
}

/**
 * Registers @fastify/multipart on the upload route's own scope (every other route stays JSON), and gives
 * back each request's quota admission once it is answered or abandoned.
 */
export async function registerUploads(scope: FastifyInstance, maxFileBytes: number): Promise<void> {
  await scope.register(multipart, { limits: { fileSize: maxFileBytes, files: 1 } });
  scope.addHook('onResponse', async (request) => releaseAdmission(request));
  scope.addHook('onRequestAbort', async (request) => releaseAdmission(request));
}

function releaseAdmission(request: FastifyRequest): void {
  admissions.get(request)?.();
  admissions.delete(request);
}

function fileTooLarge(maxFileBytes: number): AppError {
  return new AppError('payload_too_large', `The file is larger than ${Math.round(maxFileBytes / 1024 / 1024)} MB (SOURCE_MAX_FILE_MB).`);
}

/**
 * Reads the file into one buffer as it arrives: sized from Content-Length when known (the file is never more
 * than the body), so the upload is held once, not as a list of chunks joined into a second copy at the end.
 */
async function readFile(file: AsyncIterable<Buffer> & { truncated?: boolean }, capacity: number, maxFileBytes: number): Promise<Uint8Array> {
  let buffer = Buffer.allocUnsafe(capacity);
  let length = 0;
  for await (const chunk of file) {
    if (length + chunk.length > buffer.length) {
      // Only a file of unknown size (or a body longer than it said) grows: at most to the size limit, which busboy keeps.
      const grown = Buffer.allocUnsafe(Math.max(Math.min(buffer.length * 2, maxFileBytes), length + chunk.length));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    chunk.copy(buffer, length);
    length += chunk.length;
  }
  if (file.truncated) throw fileTooLarge(maxFileBytes);
  return buffer.subarray(0, length);
}

/**
 * Reads a multipart upload (field `file`, optional `title`) within the size limit, and replaces the body
 * with the form as validated: the file as `sha256:<hex>;name=<name>`, so a retry with the same
 * Idempotency-Key and another file is told apart. Before a byte of the body is read, a Content-Length that
 * says the file is over SOURCE_MAX_FILE_MB gets 413, and one that cannot fit the workspace's quotas 409
 * (`limits.admit`; the service's transaction decides in any case). Used as the preValidation hook of the upload routes (/api/v1 and the dashboard's
 * /app/api), whose scope `registerUploads` prepared.
 */
export async function readUpload(request: FastifyRequest, limits: UploadLimits): Promise<void> {
  if (!request.isMultipart()) return;
  const { maxFileBytes } = limits;
  const declared = Number(request.headers['content-length']);
  const known = Number.isSafeInteger(declared) && declared >= 0;
  // The least the file can be: the body less the form around it.
  const fileBytes = known ? Math.max(0, declared - FORM_BYTES) : 0;
  if (fileBytes > maxFileBytes) throw fileTooLarge(maxFileBytes);
  // A request with an Idempotency-Key may retry one that was stored (and filled the quota): the idempotency
  // layer, after validation, must see it to replay that answer, so only the creating transaction judges it.
  if (request.headers['idempotency-key'] === undefined) admissions.set(request, await limits.admit(request, fileBytes));
  const form: Record<string, string> = {};
  let upload: Upload | null = null;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxFileBytes, files: 1, fields: 5, fieldSize: 1000 } })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw AppError.validation('The upload is invalid.', [{ pointer: `/${part.fieldname}`, message: 'unknown field' }]);
        const bytes = await readFile(part.file, Math.min(known ? declared : UNKNOWN_SIZE_START, maxFileBytes), maxFileBytes);
        upload = { filename: part.filename, mediaType: part.mimetype || null, bytes };
        form.file = `sha256:${hash('sha256', bytes, 'hex')};name=${part.filename}`;
      } else {
        form[part.fieldname] = String(part.value);
      }
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw fileTooLarge(maxFileBytes);
    throw error;
  }
  request.body = form;
  if (upload) uploads.set(request, { ...upload, ...(form.title !== undefined ? { title: form.title } : {}), releaseAdmission: () => releaseAdmission(request) });
}

/** The file `readUpload` read from this request, if it was a multipart upload. */
export function uploadOf(request: FastifyRequest): Upload | undefined {
  return uploads.get(request);
}
