import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SMALL_BODY_LIMIT_BYTES } from '../../http/json-body.js';
import type { PasswordResetService } from '../../modules/users/password-reset.js';
import { requestFacts } from '../session.js';
import type { signInLimiter } from '../sign-in-limit.js';

/** POST /app/api/password/forgot: the account's email. */
export const ForgotPasswordBody = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }) }, { additionalProperties: false });

/** POST /app/api/password/reset: the emailed link's token and the new password. */
export const ResetPasswordBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 100 }), password: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

/** The one answer to every forgot-password request, whether or not the address has an account. */
export const FORGOT_ANSWER = { status: 'accepted', message: 'If an account uses this address, an email with a link to choose a new password is on its way.' } as const;

/**
 * Password reset by email: public routes (the per-IP budget of sign-in applies). `forgot` also spends from
 * the IP+email sign-in budget, so nobody can fill an inbox with reset emails.
 */
export function passwordResetRoutes(passwordResets: PasswordResetService, spendAttempt: ReturnType<typeof signInLimiter>): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/password/forgot', { schema: { body: ForgotPasswordBody }, config: { publicRoute: true }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
      await spendAttempt(request, reply, request.body.email);
      // The lookup and the email happen after the answer: the same 202, as fast, for any address.
      passwordResets.request(request.body.email);
      return reply.code(202).send(FORGOT_ANSWER);
    });

    app.post('/password/reset', { schema: { body: ResetPasswordBody }, config: { publicRoute: true }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
      await passwordResets.reset(request.body.token, request.body.password, requestFacts(request));
      return reply.code(204).send();
    });
  };
}
