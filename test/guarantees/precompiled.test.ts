import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precompiled, precompiledInsert, precompiledWrite } from '../../src/db/precompiled.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Statements built and compiled once, run with each call's values (src/db/precompiled.ts): the values must
// land where a freshly built query would put them, on either database.
describe('statements compiled once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const insertWorkspace = precompiledInsert('workspaces');
  const rename = precompiledWrite((db, id: string, name: string) => db.updateTable('workspaces').set({ name }).where('id', '=', id).returning(['id', 'name']));
  const findName = precompiled((db, id: string) => db.selectFrom('workspaces').select(['id', 'name']).where('id', '=', id));

  it('inserts each call with its own values, per set of columns, leaving undefined ones out', async () => {
    const db = t.app.database.db;
    const at = new Date().toISOString();
    await insertWorkspace(db, { id: 'ws_pre_1', name: 'One', created_at: at });
    await insertWorkspace(db, { id: 'ws_pre_2', name: 'Two', created_at: at, audit_seq: 7 });
    await insertWorkspace(db, { id: 'ws_pre_3', name: 'Three', created_at: at, audit_seq: undefined });
    const rows = await db.selectFrom('workspaces').select(['id', 'name', 'audit_seq']).where('id', 'like', 'ws_pre_%').orderBy('id').execute();
    expect(rows.map((r) => ({ ...r, audit_seq: Number(r.audit_seq) }))).toEqual([
      { id: 'ws_pre_1', name: 'One', audit_seq: 0 },
      { id: 'ws_pre_2', name: 'Two', audit_seq: 7 },
      { id: 'ws_pre_3', name: 'Three', audit_seq: 0 },
    ]);
  });

  it('runs a write with new arguments each time, inside a transaction too, and reports its rows', async () => {
    const db = t.app.database.db;
    const first = await rename(db, 'ws_pre_1', 'Renamed once');
    expect(first.rows).toEqual([{ id: 'ws_pre_1', name: 'Renamed once' }]);
    expect(Number(first.numAffectedRows ?? first.rows.length)).toBe(1);
    await db.transaction().execute(async (trx) => {
      expect((await rename(trx, 'ws_pre_2', 'Renamed in a transaction')).rows).toEqual([{ id: 'ws_pre_2', name: 'Renamed in a transaction' }]);
      expect(await findName(trx, 'ws_pre_2')).toEqual({ id: 'ws_pre_2', name: 'Renamed in a transaction' });
    });
    expect((await rename(db, 'ws_missing', 'Nobody')).rows).toEqual([]);
    expect(await findName(db, 'ws_pre_1')).toEqual({ id: 'ws_pre_1', name: 'Renamed once' });
    expect(await findName(db, 'ws_missing')).toBeUndefined();
  });
});
