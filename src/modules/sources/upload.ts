import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';
import type { Upload } from './service.js';

// The file of a multipart request, read before validation and handed to the handler beside the body.
const uploads = new WeakMap<FastifyRequest, Upload>();

/**
 * Reads a multipart upload (field `file`, optional `title`) within the size limit, and replaces the body
 * with the form as validated: the file as `sha256:<hex>;name=<name>`, so a retry with the same
 * Idempotency-Key and another file is told apart. Used as the preValidation hook of the upload routes
 * (/api/v1 and the dashboard's /app/api), whose plugin registers @fastify/multipart.
 */
export async function readUpload(request: FastifyRequest, maxFileBytes: number): Promise<void> {
  if (!request.isMultipart()) return;
  const form: Record<string, string> = {};
  let upload: Upload | null = null;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxFileBytes, files: 1, fields: 5, fieldSize: 1000 } })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw AppError.validation('The upload is invalid.', [{ pointer: `/${part.fieldname}`, message: 'unknown field' }]);
        const bytes = new Uint8Array(await part.toBuffer());
        upload = { filename: part.filename, mediaType: part.mimetype || null, bytes };
        form.file = `sha256:${hash('sha256', bytes, 'hex')};name=${part.filename}`;
      } else {
        form[part.fieldname] = String(part.value);
      }
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
      throw new AppError('payload_too_large', `The file is larger than ${Math.round(maxFileBytes / 1024 / 1024)} MB (SOURCE_MAX_FILE_MB).`);
    }
    throw error;
  }
  request.body = form;
  if (upload) uploads.set(request, { ...upload, ...(form.title !== undefined ? { title: form.title } : {}) });
}

/** The file `readUpload` read from this request, if it was a multipart upload. */
export function uploadOf(request: FastifyRequest): Upload | undefined {
  return uploads.get(request);
}
