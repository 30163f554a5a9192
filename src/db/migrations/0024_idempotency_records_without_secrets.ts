import type { Kysely } from 'kysely';

// What a replay says in place of the secret (the text of src/modules/webhooks/schema.ts when this was
// written; a migration keeps its own copy so it never changes with the code).
const NOTE =
  'The signing secret is shown only once, in the first answer: this is a replay of that answer (same Idempotency-Key), and the secret is never stored with it. If it was lost, rotate the secret (POST /api/v1/webhook_endpoints/{id}/rotate_secret).';

/**
 * Idempotency records no longer hold secrets: the stored answers of webhook endpoint creations and
 * rotations (kept up to 24 hours for replays) had the `whsec_…` signing secret in clear. Their `secret`
 * becomes null with a `secret_note`, as the idempotency layer now stores them. The secrets in
 * `webhook_endpoints` themselves are encrypted at startup, not here: that needs SECRET_KEY, which the
 * migrator does not have (docs/decisions/0026-secrets-at-rest.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const rows: { api_key_id: string; idempotency_key: string; response_body: string }[] = await db
    .selectFrom('idempotency_records')
    .select(['api_key_id', 'idempotency_key', 'response_body'])
    .where('response_body', 'like', '%whsec_%')
    .execute();
  for (const row of rows) {
    let body: unknown;
    try {
      body = JSON.parse(row.response_body);
    } catch {
      continue;
    }
    if (body === null || typeof body !== 'object' || typeof (body as { secret?: unknown }).secret !== 'string') continue;
    await db
      .updateTable('idempotency_records')
      .set({ response_body: JSON.stringify({ ...body, secret: null, secret_note: NOTE }) })
      .where('api_key_id', '=', row.api_key_id)
      .where('idempotency_key', '=', row.idempotency_key)
      .execute();
  }
}

/** Nothing to restore: the secrets removed from the records are gone (their endpoints keep theirs). */
export async function down(): Promise<void> {}
