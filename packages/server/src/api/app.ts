/**
 * The Fastify app of docs/protocol.md. Routes are thin: validate with the protocol's zod schemas, call the
 * coordinator, shape the response. Auth is an `onRequest` hook attached to each route from its access
 * rule (`auth.ts`); errors go through one handler (`error-handler.ts`).
 *
 * Hot-path choices (claim/complete/heartbeat at thousands of requests per second): no per-request
 * logging (errors only), no response schemas or re-serialisation, keep-alive on, one `safeParse`
 * per body.
 */
import type { Server } from 'node:http';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Coordinator } from '../services/coordinator.js';
import { CallStreams } from './call-stream.js';
import { registerDashboard } from './dashboard/index.js';
import { frameworkErrorHandler, type HtmlNotFound, installErrorHandlers } from './error-handler.js';
import { type JsonParser, jsonBodyParser } from './json-body.js';
import { jsonReplyBody } from './json-reply.js';
import { type ApiLimits, MAX_PATH_PARAM_BYTES, resolveApiLimits } from './limits.js';
import { ApiMetrics } from './metrics.js';
import { requestGuard } from './request-guard.js';
import type { RouteContext } from './route-spec.js';
import { registerAgentSnapshotRoutes } from './routes/agent-snapshots.js';
import { registerAgentRoutes } from './routes/agents.js';
import { registerAlertRoutes } from './routes/alerts.js';
import { registerDashboardLoginRoutes } from './routes/dashboard-login.js';
import { registerDependencyRoutes } from './routes/dependencies.js';
import { registerEventRoutes } from './routes/events.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerOpenApiRoute } from './routes/openapi.js';
import { registerPolicyRoutes } from './routes/policies.js';
import { registerTaskLogRoutes } from './routes/task-logs.js';
import { registerTaskResultRoutes } from './routes/task-result.js';
import { registerTaskWriteRoutes } from './routes/task-writes.js';
import { registerTaskRoutes } from './routes/tasks.js';
import { SseHub } from './sse.js';
import { answerUnroutableRequests, clientErrorHandler } from './wire-refusals.js';

export interface BuildAppOptions {
  coordinator: Coordinator;
  logger: Logger;
  /** Body size limits and SSE settings. @default DEFAULT_API_LIMITS */
  limits?: ApiLimits;
  /** Serve `GET /metrics` without a token. @default false */
  metricsPublic?: boolean;
  /** Reported in the OpenAPI document. @default '0.1.0' */
  version?: string;
}

/** The watchdog's series read at each scrape: agents by derived status, open conditions by kind. */
async function watchdogSeries(coordinator: Coordinator) {
  const g = await coordinator.watchdogGauges();
  return [
    {
      name: 'rouse_agents',
      help: 'Agents by derived status (every coordinator of a store reports the same totals).',
      type: 'gauge' as const,
      series: Object.entries(g.agentsByStatus).map(
        ([status, n]) => [{ status }, n] as [Record<string, string>, number],
      ),
    },
    {
      name: 'rouse_agent_open_conditions',
      help: 'Open conditions on agents, by kind.',
      type: 'gauge' as const,
      series: Object.entries(g.openConditions).map(
        ([condition, n]) => [{ condition }, n] as [Record<string, string>, number],
      ),
    },
    {
      name: 'rouse_watchdog_evaluations_total',
      help: 'Detector evaluations run by this coordinator.',
      type: 'counter' as const,
      series: [[{}, g.evaluations] as [Record<string, string>, number]],
    },
    {
      name: 'rouse_watchdog_evaluation_seconds_total',
      help: 'Time spent running the detectors on this coordinator.',
      type: 'counter' as const,
      series: [[{}, g.evaluationSeconds] as [Record<string, string>, number]],
    },
    {
      name: 'rouse_ladder_steps_total',
      help: 'Recovery ladder steps (an agent looked at, its interventions judged and started) run by this coordinator.',
      type: 'counter' as const,
      series: [[{}, g.ladderSteps] as [Record<string, string>, number]],
    },
    {
      name: 'rouse_ladder_step_seconds_total',
      help: 'Time spent in recovery ladder steps on this coordinator.',
      type: 'counter' as const,
      series: [[{}, g.ladderSeconds] as [Record<string, string>, number]],
    },
    {
      name: 'rouse_alert_notifications_total',
      help: 'Alert delivery attempts by this coordinator, by channel and outcome (delivered, failed and retried, gave_up).',
      type: 'counter' as const,
      series: g.alertNotifications.map(
        ({ channel, outcome, count }) => [{ channel, outcome }, count] as [Record<string, string>, number],
      ),
    },
  ];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's call streams (`call-stream.ts`); the server cuts them when its shutdown grace is over. */
    callStreams: CallStreams;
  }
}

/** Build (but do not start) the HTTP app. `app.close()` ends open event streams and unsubscribes. */
export function buildApp(options: BuildAppOptions): FastifyInstance {
  const limits = resolveApiLimits(options.limits);
  const metricsPublic = options.metricsPublic ?? false;
  const metrics = new ApiMetrics();
  const sse = new SseHub(
    {
      keepAliveMs: limits.sseKeepAliveMs,
      recheckMs: limits.sseRecheckMs,
      maxBufferedBytes: limits.sseMaxBufferedBytes,
    },
    metrics,
  );

  const logger = options.logger.child({ component: 'api' });
  const app = Fastify({
    loggerInstance: logger,
    // Errors are logged by the error handler; no per-request lines on the hot path.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: limits.jsonBodyBytes,
    forceCloseConnections: 'idle',
    // While closing, requests are refused by `request-guard.ts`, in the protocol's shape.
    return503OnClosing: false,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { maxParamLength: MAX_PATH_PARAM_BYTES },
    // Refusals made before any route runs still leave in the protocol's shape (`request-guard.ts`
    // checks Host instead of Node, `wire-refusals.ts` answers what Node's parser refuses).
    http: { requireHostHeader: false },
    frameworkErrors: frameworkErrorHandler(limits),
    clientErrorHandler: clientErrorHandler({
      lingerMs: limits.closeLingerMs,
      maxHeaderSize: () => (app.server as Server & { maxHeaderSize?: number }).maxHeaderSize,
    }),
  }) as unknown as FastifyInstance;

  const ctx: RouteContext = {
    coordinator: options.coordinator,
    limits,
    logger,
    metrics,
    sse,
    metricsPublic,
    routes: [],
    streamed: [],
  };

  // JSON only (text/plain bodies are 415); an empty JSON body is "no body" (cancel, retry). Depth
  // is measured on the text first: deeper values would overflow the stack of whatever walks them.
  // Replies' JSON as JSON.stringify writes it, sliced when long (json-reply.ts). Fastify types a
  // serializer's result as a string, but sends a Buffer as it is (its onSend path takes both).
  app.setReplySerializer((payload) => jsonReplyBody(payload) as string);
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    jsonBodyParser(parseJson as JsonParser, limits.jsonMaxDepth),
  );

  let closing = false;
  app.addHook(
    'onRequest',
    requestGuard(() => closing),
  );
  answerUnroutableRequests(app.server, { lingerMs: limits.closeLingerMs });

  const pages: { notFound?: HtmlNotFound } = {};
  installErrorHandlers(app, limits, pages);
  app.decorateRequest('caller', null);

  const unsubscribe = options.coordinator.subscribe((event) => metrics.onEvent(event));
  metrics.addGaugeSource(() => watchdogSeries(options.coordinator));
  app.addHook('preClose', async () => {
    closing = true;
    sse.closeAll();
    app.callStreams.close();
  });
  app.addHook('onClose', async () => {
    unsubscribe();
  });

  registerHealthRoutes(app, ctx);
  registerTaskRoutes(app, ctx);
  registerTaskLogRoutes(app, ctx);
  registerTaskResultRoutes(app, ctx);
  registerTaskWriteRoutes(app, ctx);
  registerAgentRoutes(app, ctx);
  registerAgentSnapshotRoutes(app, ctx);
  registerAlertRoutes(app, ctx);
  registerDependencyRoutes(app, ctx);
  registerPolicyRoutes(app, ctx);
  registerEventRoutes(app, ctx);
  registerDashboardLoginRoutes(app, ctx);
  registerOpenApiRoute(app, ctx, options.version ?? '0.1.0');
  pages.notFound = registerDashboard(app, ctx).notFound;

  // The routes declared with addCallRoute, also as frames over an upgraded connection.
  const callStreams = new CallStreams({
    coordinator: options.coordinator,
    limits,
    logger,
    routes: ctx.streamed,
    parseJson: parseJson as JsonParser,
  });
  app.server.on('upgrade', callStreams.onUpgrade);
  app.decorate('callStreams', callStreams);
  metrics.addGaugeSource(async () => [
    {
      name: 'rouse_call_streams',
      help: 'Open call streams (upgraded connections carrying calls as frames).',
      type: 'gauge' as const,
      series: [[{}, callStreams.size] as [Record<string, string>, number]],
    },
    {
      name: 'rouse_call_streams_opened_total',
      help: 'Call streams opened since the coordinator started.',
      type: 'counter' as const,
      series: [[{}, callStreams.opened] as [Record<string, string>, number]],
    },
  ]);

  return app;
}
