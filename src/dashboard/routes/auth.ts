import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import type { OperationContext } from '../../lib/actor.js';
import { AppError } from '../../http/errors.js';
import { SMALL_BODY_LIMIT_BYTES } from '../../http/json-body.js';
import type { Services } from '../../services.js';
import { userContext } from '../../modules/users/service.js';
import { ChangePasswordBody, InvitationTokenBody, SignInBody, SignUpBody, SwitchWorkspaceBody } from '../schemas.js';
import { requestFacts, setSessionCookie } from '../session.js';
import type { signInLimiter } from '../sign-in-limit.js';
import { passwordResetRoutes } from './password-reset.js';
import { notificationRoutes } from './notifications.js';

/** Accounts and sessions: sign-up, sign-in, sign-out, password reset, the current session, workspace switching, invitations. */
export function authRoutes(services: Services, config: Config, spendAttempt: ReturnType<typeof signInLimiter>): FastifyPluginAsyncTypebox {
  const { users, sessions, invitations, workspaces } = services;

  async function openSession(reply: FastifyReply, userId: string, workspaceId: string, signIn: OperationContext | null) {
    const { token, csrfToken } = await sessions.create(userId, workspaceId, signIn);
    setSessionCookie(reply, config, token);
    return csrfToken;
  }

  return async (app) => {
    await app.register(passwordResetRoutes(services.passwordResets, spendAttempt));
    await app.register(notificationRoutes(services.mailPreferences));

    app.post('/signup', { schema: { body: SignUpBody }, config: { publicRoute: true }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
      await spendAttempt(request, reply, request.body.email);
      const { email, password, workspace_name: workspaceName, invitation_token: invitationToken } = request.body;
      const created = invitationToken
        ? await invitations.signUp(invitationToken, { email, password }, requestFacts(request))
        : await users.signUp({ email, password, workspaceName: workspaceName ?? '' }, requestFacts(request), config.signup);
      const csrfToken = await openSession(reply, created.user.id, created.workspaceId, null);
      return reply.code(201).send({ user: { id: created.user.id, email: created.user.email }, workspace_id: created.workspaceId, csrf_token: csrfToken });
    });

    app.post('/signin', { schema: { body: SignInBody }, config: { publicRoute: true }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
      await spendAttempt(request, reply, request.body.email);
      const user = await users.verifyCredentials(request.body.email, request.body.password);
      const [first] = await users.workspacesOf(user.id);
      if (!first) throw new AppError('invalid_credentials', 'This account belongs to no workspace any more.');
      const csrfToken = await openSession(reply, user.id, first.workspace_id, userContext(user, first.workspace_id, requestFacts(request)));
      return { user: { id: user.id, email: user.email }, workspace_id: first.workspace_id, csrf_token: csrfToken };
    });

    app.post('/signout', async (request, reply) => {
      await sessions.end(request.session!, requestFacts(request));
      setSessionCookie(reply, config, null);
      return reply.code(204).send();
    });

    // The sign-up page asks before showing its form: under SIGNUP=first-only it is open only on an empty instance.
    app.get('/signup-status', { config: { publicRoute: true } }, async () => ({
      signup: config.signup,
      open: config.signup === 'open' || !(await users.anyExist()),
    }));

    // Guessing the current password spends from the sign-in budget, as a sign-in would.
    app.post('/account/password', { schema: { body: ChangePasswordBody }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
      const session = request.session!;
      await spendAttempt(request, reply, session.email);
      await users.setPassword(session.userId, request.body.new_password, { type: 'user', sessionId: session.sessionId, request: requestFacts(request) }, request.body.current_password);
      return reply.code(204).send();
    });

    app.get('/session', async (request) => {
      const session = request.session!;
      const [workspace, memberships] = await Promise.all([workspaces.get(session.workspaceId), users.workspacesOf(session.userId)]);
      return {
        user: { id: session.userId, email: session.email },
        workspace: { id: workspace.id, name: workspace.name, role: session.role },
        workspaces: memberships.map((m) => ({ id: m.workspace_id, name: m.name, role: m.role })),
        csrf_token: session.csrfToken,
        public_url: config.publicUrl,
      };
    });

    app.post('/session/workspace', { schema: { body: SwitchWorkspaceBody } }, async (request, reply) => {
      await sessions.switchWorkspace(request.session!, request.body.workspace_id, requestFacts(request));
      return reply.code(204).send();
    });

    app.post('/invitations/lookup', { schema: { body: InvitationTokenBody }, config: { publicRoute: true }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request) =>
      invitations.preview(request.body.token),
    );

    app.post('/invitations/accept', { schema: { body: InvitationTokenBody }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
      const session = request.session!;
      const workspaceId = await invitations.accept(request.body.token, { id: session.userId, email: session.email }, requestFacts(request));
      // Accepting is audited (invitation.accepted): moving the session there is part of it.
      await sessions.switchWorkspace(session, workspaceId, null);
      return reply.code(200).send({ workspace_id: workspaceId });
    });
  };
}
