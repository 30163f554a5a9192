import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { workspaceRepository } from './repository.js';

/** A workspace as presented. */
export interface WorkspaceView {
  id: string;
  object: 'workspace';
  name: string;
  created_at: string;
}

/** Workspaces: the tenant boundary. Created by operators (CLI) now, by sign-up later. */
export function createWorkspaceService(db: Kysely<Database>, clock: Clock) {
  return {
    /** Creates a workspace. */
    async create(name: string): Promise<WorkspaceView> {
      const trimmed = name.trim();
      if (trimmed.length === 0 || trimmed.length > 200) {
        throw AppError.validation('The workspace name must be 1 to 200 characters.', [{ pointer: '/name', message: 'must be 1 to 200 characters' }]);
      }
      const now = clock.now();
      const row = { id: newId('workspace', now.getTime()), name: trimmed, created_at: now.toISOString() };
      await workspaceRepository.insert(db, row);
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
