import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { IdOf, Nullable } from '../../http/schemas.js';
import type { OperationContext } from '../../lib/actor.js';
import { roleAtLeast } from '../../modules/users/service.js';
import type { Services } from '../../services.js';
import { dashboardContext } from '../session.js';

const Count = Type.Integer({ minimum: 0 });
const WEEK_DAYS = 7;
/** Agents whose sources are looked at for "a source synced" (the home page of a larger workspace has passed that step). */
const AGENTS_LOOKED_AT = 100;

/** GET /app/api/home: the home page's checklist, read from the workspace's real state, and its last 7 days. */
export const HomeSummary = Type.Object(
  {
    object: Type.Literal('home'),
    agent: Nullable(
      Type.Object({ id: IdOf('chatbot'), name: Type.String(), status: Type.String() }, { description: 'The newest AI Agent (where the steps link to); null before the first.' }),
    ),
    steps: Type.Object(
      {
        agent_created: Type.Boolean({ description: 'The workspace has an AI Agent.' }),
        source_synced: Type.Boolean({ description: 'One of its agents has a source that synced at least once.' }),
        agent_published: Type.Boolean({ description: 'One of its agents is active (published).' }),
        website_traffic: Type.Boolean({ description: 'A visitor has chatted in the widget on a website (the hosted page /chat/{id} does not count).' }),
        api_key: Nullable(Type.Boolean({ description: 'An API key that is not revoked exists; null for members, who cannot manage keys.' })),
      },
      { description: 'Each step of getting started, done or not.' },
    ),
    last_7_days: Type.Object(
      {
        from: Type.String({ format: 'date', description: 'First UTC day counted (today is the last).' }),
        conversations: Count,
        messages: Count,
        leads: Count,
        answer_rate: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'answered / (answered + unanswered); null when nothing was asked.' })),
      },
      { description: 'The last 7 UTC days, today included, from the analytics counters.' },
    ),
  },
  { title: 'DashboardHome' },
);
type HomeSummaryView = Static<typeof HomeSummary>;

/** Whether any of the agents has a source that synced at least once (their lists are read side by side). */
async function anySourceSynced(services: Services, ctx: OperationContext, agentIds: string[]): Promise<boolean> {
  const pages = await Promise.all(agentIds.map((id) => services.sources.list(ctx, id, { limit: 100 })));
  return pages.some((page) => page.data.some((source) => source.last_synced_at !== null));
}

/** The last 7 days out of the analytics summary's daily series (its default period ends today). */
async function lastWeek(services: Services, ctx: OperationContext): Promise<HomeSummaryView['last_7_days']> {
  const days = (await services.analytics.summary(ctx, {})).daily.slice(-WEEK_DAYS);
  const sum = (pick: (day: (typeof days)[number]) => number) => days.reduce((total, day) => total + pick(day), 0);
  const answered = sum((d) => d.answered);
  const asked = answered + sum((d) => d.unanswered);
  return {
    from: days[0]?.date ?? '',
    conversations: sum((d) => d.conversations),
    messages: sum((d) => d.messages),
    leads: sum((d) => d.leads),
    answer_rate: asked === 0 ? null : Math.round((answered / asked) * 10_000) / 10_000,
  };
}

/** The home page: one request for its checklist and its week at a glance. */
export function homeRoutes(services: Services): FastifyPluginAsyncTypebox {
  const { chatbots, conversations, apiKeys } = services;
  return async (app) => {
    app.get('/home', { schema: { response: { 200: HomeSummary } } }, async (request): Promise<HomeSummaryView> => {
      const ctx = dashboardContext(request);
      const admin = roleAtLeast(request.session!.role, 'admin');
      const [agents, published, fromWebsite, keys, week] = await Promise.all([
        chatbots.list(ctx, { limit: AGENTS_LOOKED_AT }),
        chatbots.list(ctx, { limit: 1, status: 'active' }),
        conversations.hasWebsiteTraffic(ctx),
        admin ? apiKeys.list(ctx) : Promise.resolve(null),
        lastWeek(services, ctx),
      ]);
      const newest = agents.data[0];
      return {
        object: 'home',
        agent: newest ? { id: newest.id, name: newest.name, status: newest.status } : null,
        steps: {
          agent_created: newest !== undefined,
          source_synced: await anySourceSynced(services, ctx, agents.data.map((agent) => agent.id)),
          agent_published: published.data.length > 0,
          website_traffic: fromWebsite,
          api_key: keys === null ? null : keys.some((key) => key.revoked_at === null),
        },
        last_7_days: week,
      };
    });
  };
}
