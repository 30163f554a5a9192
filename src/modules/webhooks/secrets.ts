import { AppError } from '../../http/errors.js';
import { decryptSecret, encryptSecret, ENCRYPTED_PREFIX, type SecretKey } from '../provider-settings/crypto.js';

/**
 * Binds a stored secret to its endpoint (AES-GCM additional data): a ciphertext copied into another endpoint's
 * row does not decrypt. Both columns of a row share it, so a rotation moves the current ciphertext into
 * `previous_secret` as it is.
 */
function contextOf(endpointId: string): string {
  return `webhook_endpoints.secret\n${endpointId}`;
}

/** A stored secret that does not decrypt (the key changed, or the row was altered). */
export class UnreadableSecretError extends Error {
  override name = 'UnreadableSecretError';
}

/** Webhook signing secrets as stored: encrypted under SECRET_KEY (or the SQLite instance's `secret.key`). */
export interface WebhookSecrets {
  /** False on PostgreSQL without SECRET_KEY: no secret can be stored, so no endpoint can be created or rotated. */
  readonly canStore: boolean;
  /** The stored form of a new secret; 409 `secret_key_required` when there is no key. */
  seal(endpointId: string, secret: string): string;
  /** The stored form of a stored value: a ciphertext as it is, a secret an older version kept in clear encrypted. */
  reseal(endpointId: string, stored: string): string;
  /** The `whsec_…` secret of a stored value (one still in clear as it is); UnreadableSecretError when it does not decrypt. */
  open(endpointId: string, stored: string): string;
}

/** True for a value encrypted by `seal`, false for a secret stored in clear (by a version before encryption). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(ENCRYPTED_PREFIX);
}

/** The secrets box over the instance's key (null on PostgreSQL without SECRET_KEY). */
export function webhookSecrets(secretKey: SecretKey): WebhookSecrets {
  const { key } = secretKey;
  const seal = (endpointId: string, secret: string): string => {
    if (!key) {
      throw new AppError(
        'secret_key_required',
        'Set SECRET_KEY on every instance to create webhook endpoints or rotate their secrets: signing secrets are stored encrypted under it (32 bytes as base64 or hex, the same on all of them; e.g. `openssl rand -base64 32`).',
      );
    }
    return encryptSecret(key, secret, contextOf(endpointId));
  };
  return {
    canStore: key !== null,
    seal,
    reseal: (endpointId, stored) => (isSealed(stored) ? stored : seal(endpointId, stored)),
    open(endpointId, stored) {
      if (!isSealed(stored)) return stored;
      if (!key) throw new UnreadableSecretError('the signing secret is stored encrypted but this server has no SECRET_KEY to decrypt it');
      try {
        return decryptSecret(key, stored, contextOf(endpointId));
      } catch {
        throw new UnreadableSecretError('the signing secret does not decrypt with this server\'s key (was SECRET_KEY or secret.key changed?): rotate the endpoint\'s secret');
      }
    },
  };
}
