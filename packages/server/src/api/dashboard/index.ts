/**
 * The dashboard, served by the coordinator under `/` (the API stays under `/v1`): server-rendered
 * pages from `@rouse/dashboard`'s views, the data fetched from the coordinator as the session's role
 * (admin or read-only), a live stream per page, and form actions guarded by Origin and a per-session
 * CSRF token. Registered as its own Fastify context, so its form-body parser and its HTML error pages
 * do not reach the API.
 */
import {
  type AssetUrls,
  agentsView,
  agentView,
  alertsView,
  bulkConfirmView,
  bulkResultView,
  continuePage,
  dependenciesView,
  type Html,
  interventionsView,
  loginPage,
  logLines,
  messagePage,
  type OverviewData,
  overviewView,
  page,
  policiesView,
  type TaskFilters,
  tasksView,
  taskView,
  type View,
  type ViewContext,
} from '@rouse/dashboard';
import { AGENT_STATUSES, type AgentStatus, type Json, type TaskStatus } from '@rouse/protocol';
import * as schemas from '@rouse/protocol/schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouseError } from '../../core/errors.js';
import { errorBody, toRouseError } from '../error-handler.js';
import type { RouteContext } from '../route-spec.js';
import { toTaskQuery } from '../routes/tasks.js';
import { type Assets, loadAssets } from './assets.js';
import {
  type BrowserSession,
  callerOfRole,
  checkOrigin,
  checkWrite,
  clearSessionCookie,
  sessionIdOf,
  setSessionCookie,
} from './session.js';
import { SharedReads, type ShareOptions } from './shared.js';
import { BrowserStreams } from './stream.js';

const FORM_BODY_BYTES = 256 * 1024;
const MAX_BULK = 1000;
const HOUR = 3_600_000;
const LOG_WAIT_MS = 25_000;
/** The overview's task counts (a scan of the store): see `overviewData`. */
const SUMMARY_SHARE: ShareOptions = { minMs: 1000, costFactor: 50 };
/** Lists (an index read of a page): shared by the pages that ask within the same window. */
const LIST_SHARE: ShareOptions = { minMs: 250, costFactor: 10 };
/** Interventions and alerts per page. */
const LIST_PAGE = 50;

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on our own form posts.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
} as const;

type Form = Record<string, string | string[]>;

function parseForm(text: string): Form {
  const out: Form = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const had = out[k];
    out[k] = had === undefined ? v : [had, v].flat();
  }
  return out;
}

const one = (form: Form, key: string): string | undefined => {
  const v = form[key];
  return Array.isArray(v) ? v[0] : v;
};
const many = (form: Form, key: string): string[] => [form[key] ?? []].flat();

/** A path on this site to return to (never another site: `//host` and schemes are refused). */
function safeBack(back: string | undefined, fallback: string): string {
  return back !== undefined && /^\/(?![/\\])/.test(back) ? back : fallback;
}

function isFragment(request: FastifyRequest): boolean {
  return request.headers['x-rouse-fragment'] === '1';
}

/**
 * The holder's heartbeat gaps for a task's sparkline: the gaps the store keeps (adaptive policies),
 * else the spacing of its metric samples since the attempt began.
 */
function heartbeatGaps(
  history: { gaps: number[]; samples: { at: number }[] } | null,
  since: number | null,
): number[] {
  if (history === null) return [];
  if (history.gaps.length > 0) return history.gaps;
  const at = history.samples.map((x) => x.at).filter((t) => since === null || t >= since);
  return at.slice(1).map((t, i) => t - (at[i] ?? t));
}

type Sample = { rssBytes: number | null; cpuPercent: number | null };
const rssOf = (xs: readonly Sample[]): number[] =>
  xs.flatMap((x) => (x.rssBytes === null ? [] : [x.rssBytes]));
const cpuOf = (xs: readonly Sample[]): number[] =>
  xs.flatMap((x) => (x.cpuPercent === null ? [] : [x.cpuPercent]));

/** A list page's `cursor` and `limit` (1–100; absent: the default) from its query string. */
function listPageOf(request: FastifyRequest): { cursor?: string; limit?: number } {
  const q = request.query as Record<string, unknown>;
  const out: { cursor?: string; limit?: number } = {};
  if (typeof q.cursor === 'string' && q.cursor !== '') out.cursor = q.cursor;
  if (typeof q.limit === 'string' && q.limit !== '') {
    const limit = Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new RouseError('validation_failed', 'limit: an integer from 1 to 100', {});
    out.limit = limit;
  }
  return out;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession: BrowserSession | null;
    /** How long until the page's data would be computed anew, when it was shared and older than a change (ms; 0: current). */
    dashboardStaleMs: number;
  }
}

export function registerDashboard(app: FastifyInstance, ctx: RouteContext): void {
  const { coordinator } = ctx;
  const streams = new BrowserStreams(coordinator, ctx.sse);
  const reads = new SharedReads(
    () => streams.seq,
    () => coordinator.now(),
  );
  /** A read shared between the pages of a role (see shared.ts); its staleness goes to the page. */
  const shared = <T>(
    request: FastifyRequest,
    key: string,
    options: ShareOptions,
    load: () => Promise<T>,
  ): Promise<T> => {
    const r = reads.read(key, options, load);
    request.dashboardStaleMs = Math.max(request.dashboardStaleMs, r.staleMs);
    return r.value;
  };
  app.addHook('onClose', async () => streams.close());

  app.register(async (scope) => {
    const assets: Assets = loadAssets();
    const urls: AssetUrls = assets.urls;

    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_BYTES },
      (_request, body, done) => done(null, parseForm(body as string)),
    );
    scope.decorateRequest('dashboardSession', null);
    scope.decorateRequest('dashboardStaleMs', 0);

    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(SECURITY_HEADERS);
      return payload;
    });

    // Pages refused or missing answer in HTML; fragments, the stream and actions in the protocol's JSON.
    scope.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
      const known = toRouseError(err, request, ctx.limits);
      if (!known)
        request.log.error(
          { err, method: request.method, route: request.routeOptions.url },
          'dashboard error',
        );
      const e = known ?? new RouseError('internal', 'internal error; the coordinator logged the cause', {});
      const session = request.dashboardSession;
      if (request.method === 'GET' && !isFragment(request) && session !== null) {
        return reply
          .code(e.status)
          .type('text/html; charset=utf-8')
          .send(
            messagePage(
              e.code === 'not_found' ? 'Not found' : 'Error',
              e.message,
              viewContext(request, session),
              urls,
            ).value,
          );
      }
      return reply.code(e.status).send(errorBody(e.code, e.message, e.details));
    });

    const viewContext = (request: FastifyRequest, session: BrowserSession): ViewContext => ({
      now: coordinator.now(),
      role: session.role,
      csrf: session.csrfToken,
      here: request.url,
    });

    async function sessionOf(request: FastifyRequest): Promise<BrowserSession | null> {
      const id = sessionIdOf(request);
      if (id === '') return null;
      const s = await coordinator.dashboard.resumeSession(id);
      if (s === null) return null;
      const session = { ...s, id, caller: callerOfRole(s.role) };
      request.dashboardSession = session;
      return session;
    }

    async function requireSession(request: FastifyRequest): Promise<BrowserSession> {
      const s = await sessionOf(request);
      if (s === null) throw new RouseError('unauthorized', 'no dashboard session: sign in at /login', {});
      return s;
    }

    const sendHtml = (reply: FastifyReply, body: Html, status = 200) =>
      reply
        .code(status)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(body.value);

    /** A page: redirected to the login page without a session; only the live region for the page's script. */
    function pageRoute(
      url: string,
      load: (request: FastifyRequest, session: BrowserSession, vc: ViewContext) => Promise<View>,
    ) {
      scope.get(url, async (request, reply) => {
        const session = await sessionOf(request);
        if (session === null) {
          if (isFragment(request))
            throw new RouseError('unauthorized', 'no dashboard session: sign in at /login', {});
          return reply.code(303).header('cache-control', 'no-store').redirect('/login');
        }
        const vc = viewContext(request, session);
        const view = await load(request, session, vc);
        if (!isFragment(request)) return sendHtml(reply, page(view, vc, urls));
        // Shared data older than the newest change: the page asks again when a fresh answer is due.
        if (request.dashboardStaleMs > 0)
          reply.header('x-rouse-refresh-in', String(request.dashboardStaleMs));
        return sendHtml(reply, view.live);
      });
    }

    // ---- assets ----
    scope.get('/assets/:name', async (request, reply) => {
      const asset = assets.byName.get((request.params as { name: string }).name);
      if (asset === undefined) throw new RouseError('not_found', 'no such asset', { kind: 'asset' });
      reply
        .header('content-type', asset.contentType)
        .header('etag', asset.etag)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'accept-encoding');
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
        return reply.header('content-encoding', 'gzip').send(asset.gzip);
      }
      return reply.send(asset.body);
    });

    // ---- sign in and out ----
    scope.get('/login', async (request, reply) => {
      const once = (request.query as Record<string, unknown>).once;
      if (typeof once === 'string' && once !== '') {
        const opened = await coordinator.dashboard.openSession({ code: once });
        if (opened === null) {
          return sendHtml(
            reply,
            loginPage(
              {
                error:
                  'That login link was used already or has expired. Ask for a new one (rouse dashboard), or paste a token.',
              },
              urls,
            ),
            401,
          );
        }
        setSessionCookie(request, reply, opened.sessionId);
        return sendHtml(reply, continuePage(urls));
      }
      return sendHtml(reply, loginPage({}, urls));
    });

    scope.post('/login', async (request, reply) => {
      checkOrigin(request);
      const token = one((request.body ?? {}) as Form, 'token') ?? '';
      const opened = token === '' ? null : await coordinator.dashboard.openSession({ token });
      if (opened === null) {
        return sendHtml(
          reply,
          loginPage({ error: 'That token was not accepted: paste the admin or the read-only token.' }, urls),
          401,
        );
      }
      setSessionCookie(request, reply, opened.sessionId);
      return reply.code(303).redirect('/');
    });

    scope.post('/logout', async (request, reply) => {
      const session = await requireSession(request);
      checkWrite(request, session, one((request.body ?? {}) as Form, '_csrf'), false);
      await coordinator.dashboard.endSession(session.id);
      clearSessionCookie(request, reply);
      return sendHtml(reply, loginPage({ message: 'Signed out.' }, urls));
    });

    /** What the page's script asks when its stream is refused: is the session still there? */
    scope.get('/session', async (request) => {
      const s = await requireSession(request);
      return { role: s.role };
    });

    scope.get('/events', async (request, reply) => {
      await requireSession(request);
      streams.serve(request, reply);
    });

    // ---- views ----
    // The overview's task counts scan the store: shared by every page of a role, and computed at most
    // once every 50 times what they cost (at least a second), so that however many overviews are open
    // they take at most a fiftieth of the coordinator's time. The rest is cheap: shared for 250 ms.
    const overviewData = async (request: FastifyRequest, session: BrowserSession): Promise<OverviewData> => {
      const caller = session.caller;
      const [summary, rest] = await Promise.all([
        shared(request, `summary|${session.role}`, SUMMARY_SHARE, () =>
          coordinator.taskSummary(caller, HOUR),
        ),
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

    pageRoute('/tasks', async (request, session, vc) => {
      const raw = { ...(request.query as Record<string, unknown>) };
      for (const k of Object.keys(raw)) if (raw[k] === '') delete raw[k];
      const filters: TaskFilters = {};
      if (typeof raw.status === 'string') filters.status = raw.status.split(',') as TaskStatus[];
      if (typeof raw.type === 'string') filters.type = raw.type;
      if (typeof raw.agentId === 'string') filters.agentId = raw.agentId;
      if (typeof raw.label === 'string') filters.label = raw.label;
      if (typeof raw.q === 'string') filters.q = raw.q;
      if (typeof raw.cursor === 'string') filters.cursor = raw.cursor;
      const parsed = schemas.listTasksQuery.safeParse({ ...raw, limit: '50' });
      if (!parsed.success) {
        const error = parsed.error.issues
          .map((i) => `${i.path.join('.') || 'query'}: ${i.message}`)
          .join('; ');
        return tasksView({ filters, tasks: [], nextCursor: null, error }, vc);
      }
      const query = toTaskQuery(parsed.data);
      const { tasks, nextCursor } = await shared(
        request,
        `tasks|${session.role}|${JSON.stringify(query)}`,
        LIST_SHARE,
        () => coordinator.listTasks(session.caller, query),
      );
      return tasksView({ filters, tasks, nextCursor }, vc);
    });

    pageRoute('/tasks/:id', async (request, session, vc) => {
      const id = (request.params as { id: string }).id;
      const caller = session.caller;
      const task = await coordinator.getTask(caller, id);
      const [events, diagnosis, logs, history] = await Promise.all([
        coordinator.listTaskEvents(caller, id),
        coordinator.diagnose(caller, id),
        coordinator.readLogs(caller, id, 0),
        task.agentId === null ? null : coordinator.agentHistory(caller, task.agentId),
      ]);
      return taskView(
        {
          task,
          events,
          diagnosis,
          logs: logs.lines,
          logsTruncated: logs.truncated === true,
          heartbeatGapsMs: heartbeatGaps(history, task.startedAt ?? task.claimedAt),
        },
        vc,
      );
    });

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

    pageRoute('/interventions', async (request, session, vc) => {
      const at = listPageOf(request);
      const r = await coordinator.listInterventions(session.caller, {
        limit: at.limit ?? LIST_PAGE,
        ...(at.cursor ? { cursor: at.cursor } : {}),
      });
      return interventionsView({ interventions: r.interventions, nextCursor: r.nextCursor, ...at }, vc);
    });

    pageRoute('/alerts', async (request, session, vc) => {
      const state = (request.query as Record<string, unknown>).state;
      const states =
        state === 'firing' || state === 'resolved' ? [state as 'firing' | 'resolved'] : undefined;
      const at = listPageOf(request);
      const r = await coordinator.listAlerts(session.caller, {
        ...(states ? { states } : {}),
        limit: at.limit ?? LIST_PAGE,
        ...(at.cursor ? { cursor: at.cursor } : {}),
      });
      return alertsView(
        { alerts: r.alerts, nextCursor: r.nextCursor, ...at, ...(states ? { state: states[0] } : {}) },
        vc,
      );
    });

    scope.get('/alerts/:id', async (request, reply) => {
      await requireSession(request);
      return reply
        .code(303)
        .redirect(`/alerts#alert-${encodeURIComponent((request.params as { id: string }).id)}`);
    });

    pageRoute('/dependencies', async (_request, session, vc) =>
      dependenciesView({ dependencies: await coordinator.listDependencies(session.caller) }, vc),
    );

    pageRoute('/policies', async (_request, session, vc) =>
      policiesView(await coordinator.policies(session.caller), vc),
    );

    // ---- data the pages link to ----
    scope.get('/tasks/:id/json/:part', async (request, reply) => {
      const session = await requireSession(request);
      const { id, part } = request.params as { id: string; part: string };
      const task = await coordinator.getTask(session.caller, id);
      const parts: Record<string, Json | undefined> = {
        payload: task.payload,
        result: task.result,
        checkpoint: task.checkpoint,
        session: task.session,
      };
      if (!(part in parts))
        throw new RouseError('not_found', `no part ${part}; payload, result, checkpoint or session`, {});
      return reply
        .header('content-disposition', `attachment; filename="${id}-${part}.json"`)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(parts[part] ?? null, null, 2));
    });

    scope.get('/tasks/:id/result', async (request, reply) => {
      const session = await requireSession(request);
      const id = (request.params as { id: string }).id;
      const stored = await coordinator.getResult(session.caller, id);
      reply.header('content-disposition', `attachment; filename="${id}-result"`);
      // Sent as a download of bytes whatever its type: an uploaded text/html must not render here.
      if (stored.blob) return reply.type('application/octet-stream').send(stored.blob.stream);
      return reply
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(stored.inline ?? null, null, 2));
    });

    scope.get('/agents/:id/json/snapshot', async (request, reply) => {
      const session = await requireSession(request);
      const id = (request.params as { id: string }).id;
      const snapshot = await coordinator.getSnapshot(session.caller, id);
      return reply
        .header('content-disposition', `attachment; filename="${id}-snapshot.json"`)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(snapshot.state, null, 2));
    });

    /** The log lines after `after`, waiting up to 25 s for one while the task runs (the page follows with it). */
    scope.get('/tasks/:id/logs', async (request) => {
      const session = await requireSession(request);
      const id = (request.params as { id: string }).id;
      const after = Number((request.query as Record<string, unknown>).after ?? 0);
      if (!Number.isInteger(after) || after < 0)
        throw new RouseError('validation_failed', 'after: an integer >= 0', {});
      const task = await coordinator.getTask(session.caller, id);
      if (!task.final) {
        const gone = new AbortController();
        request.raw.once('close', () => gone.abort());
        await coordinator.waitForLogs(
          id,
          after,
          AbortSignal.any([gone.signal, AbortSignal.timeout(LOG_WAIT_MS)]),
        );
      }
      const [logs, now] = await Promise.all([
        coordinator.readLogs(session.caller, id, after),
        coordinator.getTask(session.caller, id),
      ]);
      return {
        lines: logs.lines.map((l) => ({ seq: l.seq, attempt: l.attempt, html: logLines([l]).value })),
        last: logs.lines.at(-1)?.seq ?? after,
        final: now.final,
      };
    });

    // ---- actions (admin sessions; Origin and CSRF checked) ----
    const writeSession = async (request: FastifyRequest) => {
      const session = await requireSession(request);
      checkWrite(request, session, one((request.body ?? {}) as Form, '_csrf'), true);
      return session;
    };

    scope.post('/tasks/:id/cancel', async (request, reply) => {
      const session = await writeSession(request);
      const id = (request.params as { id: string }).id;
      await coordinator.cancelTask(session.caller, id, 'cancelled from the dashboard');
      return reply.code(303).redirect(safeBack(one(request.body as Form, 'back'), `/tasks/${id}`));
    });

    scope.post('/tasks/:id/retry', async (request, reply) => {
      const session = await writeSession(request);
      const id = (request.params as { id: string }).id;
      await coordinator.retryTask(session.caller, id);
      return reply.code(303).redirect(safeBack(one(request.body as Form, 'back'), `/tasks/${id}`));
    });

    scope.post('/tasks/bulk', async (request, reply) => {
      const session = await writeSession(request);
      const form = request.body as Form;
      const action = one(form, 'action');
      if (action !== 'cancel' && action !== 'retry')
        throw new RouseError('validation_failed', 'action: cancel or retry', {});
      const ids = [...new Set(many(form, 'id'))];
      if (ids.length === 0) throw new RouseError('validation_failed', 'id: select at least one task', {});
      if (ids.length > MAX_BULK)
        throw new RouseError('validation_failed', `id: at most ${MAX_BULK} tasks at once`, {});
      const back = safeBack(one(form, 'back'), '/tasks');
      const vc = viewContext(request, session);
      if (one(form, 'confirmed') !== String(ids.length)) {
        return sendHtml(reply, page(bulkConfirmView(action, ids, back, vc), vc, urls));
      }
      let done = 0;
      const refused: { id: string; message: string }[] = [];
      for (const id of ids) {
        try {
          if (action === 'cancel')
            await coordinator.cancelTask(session.caller, id, 'cancelled from the dashboard (bulk)');
          else await coordinator.retryTask(session.caller, id);
          done++;
        } catch (err) {
          if (!(err instanceof RouseError)) throw err;
          refused.push({ id, message: err.message });
        }
      }
      return sendHtml(reply, page(bulkResultView(action, done, refused, back, vc), vc, urls));
    });

    scope.post('/agents/:id/commands', async (request, reply) => {
      const session = await writeSession(request);
      const id = (request.params as { id: string }).id;
      const type = one(request.body as Form, 'type');
      if (type !== 'wake' && type !== 'restart' && type !== 'terminate') {
        throw new RouseError('validation_failed', 'type: wake, restart or terminate', {});
      }
      await coordinator.sendCommand(session.caller, id, { type, reason: 'from the dashboard' });
      return reply.code(303).redirect(safeBack(one(request.body as Form, 'back'), `/agents/${id}`));
    });
  });
}
