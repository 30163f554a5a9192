import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { workspaceRepository } from './repository.js';
import { systemContext } from '../../lib/actor.js';
import type { AuditWriter } from '../audit/writer.js';

/** A workspace as presented. */
export interface WorkspaceView {
  id: string;
  object: 'workspace';
  name: string;
  created_at: string;
}

/** Workspaces: the tenant boundary. Created by operators (CLI) now, by sign-up later. */
export function createWorkspaceService(db: Kysely<Database>, clock: Clock, audit: AuditWriter) {
  return {
    /** Creates a workspace. */
    async create(name: string, createdBy = 'cli'): Promise<WorkspaceView> {
      const trimmed = name.trim();
      if (trimmed.length === 0 || trimmed.length > 200) {
        throw AppError.validation('The workspace name must be 1 to 200 characters.', [{ pointer: '/name', message: 'must be 1 to 200 characters' }]);
      }
      const now = clock.now();
      const row = { id: newId('workspace', now.getTime()), name: trimmed, created_at: now.toISOString() };
      await db.transaction().execute(async (trx) => {
        await workspaceRepository.insert(trx, row);
        await audit.record(trx, systemContext(row.id, createdBy), {
          action: 'workspace.created',
          target: { type: 'workspace', id: row.id },
          changes: { name: { before: null, after: row.name } },
        });
      });
      return { ...row, object: 'workspace' };
    },

    /** One workspace, or a 404. */
    async get(id: string): Promise<WorkspaceView> {
      const row = isId('workspace', id) ? await workspaceRepository.find(db, id) : undefined;
      if (!row) throw AppError.notFound('workspace', id);
      return { ...row, object: 'workspace' };
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
