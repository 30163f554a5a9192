import { Type, type Static } from 'typebox';
import { SCOPES } from '../http/scopes.js';
import { ROLES } from '../modules/users/service.js';

// Bodies and queries of the dashboard's own endpoints (/app/api). Resource bodies (agents, leads) reuse
// the /api/v1 schemas.

const Email = Type.String({ minLength: 3, maxLength: 254 });
const Password = Type.String({ minLength: 1, maxLength: 256 });
const Role = Type.Enum(ROLES);

/** POST /app/api/signup: a new workspace, or joining one through an invitation token. */
export const SignUpBody = Type.Object(
  {
    email: Email,
    password: Password,
    workspace_name: Type.Optional(Type.String({ maxLength: 200 })),
    invitation_token: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

/** POST /app/api/signin. */
export const SignInBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });

/** POST /app/api/account/password: the signed-in user's current password and the new one. */
export const ChangePasswordBody = Type.Object({ current_password: Password, new_password: Password }, { additionalProperties: false });

/** POST /app/api/session/workspace. */
export const SwitchWorkspaceBody = Type.Object({ workspace_id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

/** POST /app/api/api-keys. */
export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Array(Type.Enum(SCOPES), { minItems: 1, uniqueItems: true }),
    expires_in_days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateApiKeyInput = Static<typeof CreateApiKeyBody>;

/** POST /app/api/invitations. */
export const CreateInvitationBody = Type.Object(
  { role: Role, email: Type.Optional(Type.Union([Email, Type.Null()])) },
  { additionalProperties: false },
);

/** PATCH /app/api/members/{user_id}. */
export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });

/** POST /app/api/conversations/{id}/messages (an operator's reply). */
export const OperatorReplyBody = Type.Object({ content: Type.String({ minLength: 1, maxLength: 10_000 }) }, { additionalProperties: false });

/** POST /app/api/chatbots/{id}/preview/{conversation_id}/messages. */
export const PreviewMessageBody = Type.Object({ content: Type.String({ minLength: 1, maxLength: 10_000 }) }, { additionalProperties: false });

/** GET /app/api/audit. */
export const AuditQuery = Type.Object(
  {
    actor: Type.Optional(Type.String({ maxLength: 254 })),
    action: Type.Optional(Type.String({ maxLength: 100 })),
    from: Type.Optional(Type.String({ format: 'date-time' })),
    to: Type.Optional(Type.String({ format: 'date-time' })),
    before_seq: Type.Optional(Type.Integer({ minimum: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  },
  { additionalProperties: false },
);
export type AuditQueryInput = Static<typeof AuditQuery>;

/** GET /app/api/audit/export. */
export const AuditExportQuery = Type.Object({ format: Type.Enum(['csv', 'jsonl']) }, { additionalProperties: false });

/** Invitation lookups and acceptance: the token travels in the body, never in a URL (URLs are logged). */
export const InvitationTokenBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

/** `{user_id}` in member paths. */
export const UserParams = Type.Object({ user_id: Type.String({ maxLength: 64 }) });

/** `{id}/preview/{conversation_id}` in preview paths. */
export const PreviewParams = Type.Object({ id: Type.String({ maxLength: 64 }), conversation_id: Type.String({ maxLength: 64 }) });
