/** The overview, the dependencies and the policies pages. */
import { dependenciesView, type OverviewData, overviewView, policiesView } from '@rouse/dashboard';
import type { FastifyRequest } from 'fastify';
import { LIST_SHARE, type ShareOptions } from '../read-sharing.js';
import type { BrowserSession } from '../session.js';
import type { Site } from '../site.js';

const HOUR = 3_600_000;
/** The overview's task counts (a scan of the store): see `overviewData`. */
const SUMMARY_SHARE: ShareOptions = { minMs: 1000, costFactor: 50 };

export function registerOverviewPages(site: Site): void {
  const { coordinator, pageRoute, shared } = site;

  // ---- views ----
  // The overview's task counts scan the store: shared by every page of a role, and computed at most
  // once every 50 times what they cost (at least a second), so that however many overviews are open
  // they take at most a fiftieth of the coordinator's time. The rest is cheap: shared for 250 ms.
  const overviewData = async (request: FastifyRequest, session: BrowserSession): Promise<OverviewData> => {
    const caller = session.caller;
    const [summary, rest] = await Promise.all([
      shared(request, `summary|${session.role}`, SUMMARY_SHARE, () => coordinator.taskSummary(caller, HOUR)),
      shared(request, `overview|${session.role}`, LIST_SHARE, () =>
        Promise.all([
          coordinator.watchdogGauges(),
          coordinator.listAlerts(caller, { states: ['firing'], limit: 50 }),
          coordinator.listDependencies(caller),
        ]),
      ),
    ]);
    const [gauges, alerts, dependencies] = rest;
    return {
      tasks: summary,
      windowMs: HOUR,
      agentsByStatus: gauges.agentsByStatus,
      openConditions: gauges.openConditions,
      firingAlerts: alerts.alerts,
      dependencies,
    };
  };

  pageRoute('/', async (request, session, vc) => overviewView(await overviewData(request, session), vc));

  pageRoute('/dependencies', async (_request, session, vc) =>
    dependenciesView({ dependencies: await coordinator.listDependencies(session.caller) }, vc),
  );

  pageRoute('/policies', async (_request, session, vc) =>
    policiesView(await coordinator.policies(session.caller), vc),
  );
}
