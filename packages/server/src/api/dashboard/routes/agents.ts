/** The agent list (with each agent's recent memory and CPU) and the agent page. */
import { agentsView, agentView } from '@rouse/dashboard';
import { AGENT_STATUSES, type AgentStatus } from '@rouse/protocol';
import { RouseError } from '../../../core/errors.js';
import { LIST_SHARE } from '../read-sharing.js';
import type { Site } from '../site.js';

type Sample = { rssBytes: number | null; cpuPercent: number | null };
const rssOf = (xs: readonly Sample[]): number[] =>
  xs.flatMap((x) => (x.rssBytes === null ? [] : [x.rssBytes]));
const cpuOf = (xs: readonly Sample[]): number[] =>
  xs.flatMap((x) => (x.cpuPercent === null ? [] : [x.cpuPercent]));

export function registerAgentPages(site: Site): void {
  const { coordinator, pageRoute, shared } = site;

  pageRoute('/agents', async (request, session, vc) => {
    const q = request.query as Record<string, unknown>;
    const status = typeof q.status === 'string' && q.status !== '' ? q.status : undefined;
    const type = typeof q.type === 'string' && q.type !== '' ? q.type : undefined;
    const cursor = typeof q.cursor === 'string' && q.cursor !== '' ? q.cursor : null;
    if (status !== undefined && !(AGENT_STATUSES as readonly string[]).includes(status)) {
      throw new RouseError('validation_failed', `status: one of ${AGENT_STATUSES.join(', ')}`, {});
    }
    const { agents, nextCursor, history } = await shared(
      request,
      `agents|${session.role}|${status ?? ''}|${type ?? ''}|${cursor ?? ''}`,
      LIST_SHARE,
      async () => {
        const list = await coordinator.listAgents(session.caller, {
          ...(status ? { statuses: [status as AgentStatus] } : {}),
          ...(type ? { agentType: type } : {}),
          limit: 100,
          cursor,
        });
        const samples = await coordinator.agentSamples(
          session.caller,
          list.agents.map((a) => a.id),
        );
        return { ...list, history: samples };
      },
    );
    const samples = new Map(
      [...history].map(([id, xs]) => [id, { rss: rssOf(xs), cpu: cpuOf(xs) }] as const),
    );
    return agentsView(
      { agents, samples, nextCursor, ...(status ? { status } : {}), ...(type ? { type } : {}) },
      vc,
    );
  });

  pageRoute('/agents/:id', async (request, session, vc) => {
    const id = (request.params as { id: string }).id;
    const caller = session.caller;
    const agent = await coordinator.getAgent(caller, id);
    const [diagnosis, conditions, interventions, snapshot, history] = await Promise.all([
      coordinator.diagnoseAgent(caller, id),
      coordinator.listConditions(caller, { agentId: id, limit: 50 }),
      coordinator.listInterventions(caller, { agentId: id, limit: 50 }),
      coordinator.getSnapshot(caller, id).catch((err: unknown) => {
        if (err instanceof RouseError && err.code === 'not_found') return null;
        throw err;
      }),
      coordinator.agentHistory(caller, id),
    ]);
    return agentView(
      {
        agent,
        diagnosis,
        conditions: conditions as never,
        interventions: interventions.interventions,
        snapshot,
        rssSamples: rssOf(history?.samples ?? []),
        cpuSamples: cpuOf(history?.samples ?? []),
      },
      vc,
    );
  });
}
