/**
 * A tiny fake coordinator over real HTTP (node:http on 127.0.0.1) for the SDK's tests: just the
 * endpoints the worker uses, with switches to make it refuse things. Not our store, not our server —
 * a stand-in that lets a test watch every request the SDK sends. Tests wait on its events, never sleep.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AgentCommand,
  type AgentHeartbeatRequest,
  applyMergePatch,
  type CommandAck,
  type Json,
  type JsonObject,
  type RegisterAgentRequest,
  type Task,
  type TaskBeat,
  type TaskError,
} from '@rouse/protocol';
import { mockTask } from '../testing/index.js';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw bytes for other content types. */
  body: unknown;
}

export type Override = (req: Recorded, res: ServerResponse) => boolean;

/** An effect key (`ctx.once`) as the fake keeps it: claimed (`running`) or recorded (`done`). */
export interface FakeEffect {
  state: 'running' | 'done';
  /** The claim that holds the key, or recorded it. */
  claimId: string;
  /** The version (attempt) that claimed it. */
  version: number;
  claimExpiresAt: number;
  result: Json | null;
  doneAt: number | null;
}

export class FakeCoordinator extends EventEmitter {
  readonly requests: Recorded[] = [];
  readonly queue: Task[] = [];
  readonly completed = new Map<
    string,
    { version: number; result: Json | undefined; via: 'claim' | 'complete' }
  >();
  readonly failed = new Map<string, { version: number; error: TaskError }>();
  readonly uploads = new Map<string, { contentType: string; body: Buffer }>();
  readonly logs: { taskId: string; lines: { stream?: string; text: string }[] }[] = [];
  /** Tasks whose lease is gone: heartbeats answer ok:false, writes 409 stale_version. */
  readonly stale = new Set<string>();
  /**
   * Tasks an operator cancelled, answered as the real coordinator does: a beat gets `cancelled` (and a
   * `cancel` command with it), a complete/fail 409 `invalid_transition` from `cancelled`, a completion
   * folded into a claim `invalid_transition` without details.
   */
  readonly cancelled = new Set<string>();
  /** The last progress and phase each task's beats carried (what the task shows). */
  readonly taskProgress = new Map<string, { progress: number | undefined; phase: string | undefined }>();
  /** Every registration body, in order. */
  readonly registrations: RegisterAgentRequest[] = [];
  /** Agent ids that left (DELETE). */
  readonly left: string[] = [];
  /** When set, registration needs this enrollment token (else 401). */
  enrollToken: string | undefined;
  commands: AgentCommand[] = [];
  /** The bodies of `POST /v1/agents/{id}/commands/acks`, in order. */
  readonly ackCalls: CommandAck[][] = [];
  /** False: answer that route 404, as a coordinator that predates it. */
  ackRoute = true;
  heartbeatIntervalMs = 60_000;
  agentToken = 'agent-token-1';
  /** Other agent tokens accepted for task writes (agents of earlier processes). */
  readonly acceptedTokens = new Set<string>();
  /** Answer a request yourself (return true when handled). */
  override: Override | undefined;
  /**
   * Effect keys by `effectId(taskId, key)`, with the coordinator's rules: the first claim runs the
   * effect, a live claim answers `running`, a claim past its `claimExpiresAt` may be taken anew, a
   * record needs the claim that holds the key, a release frees it. Tests may edit entries.
   */
  readonly effects = new Map<string, FakeEffect>();
  /**
   * The agent's snapshot as the fake keeps it (full `PUT`s replace it, `PATCH`es merge into it); handed
   * over at registration when the registration has a key. Tests may set it.
   */
  snapshot: { state: JsonObject; version: number; ttlMs: number } | null = null;
  /** The clock of effect claims (a test moves it to make a claim lapse). */
  now: () => number = () => Date.now();
  private claimSeq = 0;
  private server: Server | undefined;
  private readonly waits = new Set<() => void>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const raw = Buffer.concat(chunks);
        const isJson = (req.headers['content-type'] ?? '').includes('json');
        const body = raw.length === 0 ? undefined : isJson ? JSON.parse(raw.toString('utf8')) : raw;
        const rec: Recorded = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body,
        };
        this.requests.push(rec);
        this.emit('request', rec);
        if (this.override?.(rec, res)) return;
        void this.route(rec, res, req.headers.authorization ?? '').finally(() => this.emit('handled', rec));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Stop listening and cut every connection (long-polls included). */
  async close(): Promise<void> {
    for (const wake of this.waits) wake();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Queue a claimable task (it is handed out `running`). */
  addTask(partial: Partial<Task> = {}): Task {
    const task = mockTask({ status: 'running', agentId: 'agt_1', ...partial });
    this.queue.push(task);
    for (const wake of this.waits) wake();
    return task;
  }

  /** Resolve with the first request (past or future) matching `pred`. */
  waitForRequest(pred: (r: Recorded) => boolean, fromIndex = 0): Promise<Recorded> {
    const found = this.requests.slice(fromIndex).find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const on = (r: Recorded): void => {
        if (pred(r)) {
          this.off('request', on);
          resolve(r);
        }
      };
      this.on('request', on);
    });
  }

  /** The agent heartbeat bodies received so far. */
  agentBeats(): AgentHeartbeatRequest[] {
    return this.requests
      .filter((r) => r.method === 'POST' && /^\/v1\/agents\/[^/]+\/heartbeat$/.test(r.path))
      .map((r) => r.body as AgentHeartbeatRequest);
  }

  /** Resolve once `check()` holds (re-checked after every handled request). */
  waitUntil(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => {
      const on = (): void => {
        if (check()) {
          this.off('handled', on);
          resolve();
        }
      };
      this.on('handled', on);
    });
  }

  private async route(r: Recorded, res: ServerResponse, auth: string): Promise<void> {
    const p = r.path;
    const token = auth.replace(/^Bearer /, '');
    if (r.method === 'POST' && p === '/v1/agents') {
      if (this.enrollToken !== undefined && token !== this.enrollToken)
        return error(res, 401, 'unauthorized', 'not an enrollment token');
      const body = r.body as RegisterAgentRequest;
      const incarnation =
        body.key === undefined ? 1 : this.registrations.filter((x) => x.key === body.key).length + 1;
      this.registrations.push(body);
      return send(res, 201, {
        agent: { id: 'agt_1', agentType: body.agentType, key: body.key ?? null, incarnation },
        token: this.agentToken,
        heartbeatIntervalMs: this.heartbeatIntervalMs,
        incarnation,
        snapshot: body.key === undefined || this.snapshot === null ? null : this.snapshotBody(),
      });
    }
    if (token !== this.agentToken && !this.acceptedTokens.has(token))
      return error(res, 403, 'forbidden', 'not this agent');
    if (r.method === 'POST' && /^\/v1\/agents\/[^/]+\/claim$/.test(p)) return this.claim(r, res);
    if (r.method === 'POST' && /^\/v1\/agents\/[^/]+\/heartbeat$/.test(p)) {
      const beats = (r.body as { tasks?: TaskBeat[] }).tasks ?? [];
      const tasks = beats.map((b) => {
        if (this.stale.has(b.taskId)) return { taskId: b.taskId, ok: false, code: 'stale_version' };
        if (this.cancelled.has(b.taskId)) {
          this.commands.push({ type: 'cancel', taskId: b.taskId, reason: 'the task was cancelled' });
          return { taskId: b.taskId, ok: false, code: 'cancelled' };
        }
        this.taskProgress.set(b.taskId, { progress: b.progress, phase: b.phase });
        return { taskId: b.taskId, ok: true, leaseExpiresAt: Date.now() + 15000 };
      });
      const commands = this.commands;
      this.commands = [];
      return send(res, 200, { heartbeatIntervalMs: this.heartbeatIntervalMs, tasks, commands });
    }
    if (this.ackRoute && r.method === 'POST' && /^\/v1\/agents\/[^/]+\/commands\/acks$/.test(p)) {
      const acks = (r.body as { acks: CommandAck[] }).acks;
      this.ackCalls.push(acks);
      return send(res, 200, { recorded: acks.length });
    }
    if (/^\/v1\/agents\/[^/]+\/snapshot$/.test(p)) return this.snapshotRoute(r, res);
    if (r.method === 'DELETE' && /^\/v1\/agents\/[^/]+$/.test(p)) {
      this.left.push(p.split('/')[3]!);
      return send(res, 204);
    }
    const e = p.match(/^\/v1\/tasks\/([^/]+)\/effects\/([^/]+)(\/claim)?$/);
    if (e)
      return this.effect(r, res, decodeURIComponent(e[1]!), decodeURIComponent(e[2]!), e[3] !== undefined);
    const m = p.match(/^\/v1\/tasks\/([^/]+)\/(complete|fail|logs|checkpoint|result)$/);
    if (!m) return error(res, 404, 'not_found', `no route ${r.method} ${p}`);
    const taskId = m[1]!;
    if (this.stale.has(taskId))
      return error(res, 409, 'stale_version', 'version is not current', { currentVersion: 99 });
    if (this.cancelled.has(taskId) && m[2] !== 'logs') {
      const to = m[2] === 'complete' ? 'completed' : m[2] === 'fail' ? 'failed' : 'running';
      return error(res, 409, 'invalid_transition', `task ${taskId} cannot go from cancelled to ${to}`, {
        taskId,
        from: 'cancelled',
        to,
      });
    }
    const body = r.body as { version: number; result?: Json; error?: TaskError; lines?: { text: string }[] };
    switch (m[2]) {
      case 'complete':
        this.completed.set(taskId, { version: body.version, result: body.result, via: 'complete' });
        return send(res, 200, { task: { id: taskId, status: 'completed' } });
      case 'fail':
        this.failed.set(taskId, { version: body.version, error: body.error! });
        return send(res, 200, { task: { id: taskId, status: 'failed' } });
      case 'logs':
        this.logs.push({ taskId, lines: body.lines ?? [] });
        return send(res, 200, { accepted: body.lines?.length ?? 0, truncated: false });
      case 'checkpoint':
        return send(res, 204);
      default: {
        const buf = Buffer.isBuffer(r.body) ? r.body : Buffer.from(JSON.stringify(r.body));
        this.uploads.set(taskId, { contentType: String(r.headers['content-type']), body: buf });
        return send(res, 200, {
          key: `${taskId}/1`,
          sizeBytes: buf.length,
          contentType: r.headers['content-type'],
          sha256: 'x',
        });
      }
    }
  }

  private snapshotBody() {
    const s = this.snapshot!;
    return { agentId: 'agt_1', state: s.state, version: s.version, deltas: 0, ttlMs: s.ttlMs };
  }

  /** `PUT`, `PATCH` (merge patch) and `GET /v1/agents/{id}/snapshot`. */
  private async snapshotRoute(r: Recorded, res: ServerResponse): Promise<void> {
    const ttl = Number(r.query.get('ttlMs') ?? Number.NaN);
    if (r.method === 'PUT') {
      const body = r.body as { state: JsonObject; ttlMs?: number };
      const version = (this.snapshot?.version ?? 0) + 1;
      this.snapshot = { state: body.state, version, ttlMs: body.ttlMs ?? 86_400_000 };
      return send(res, 200, { snapshot: this.snapshotBody() });
    }
    if (this.snapshot === null) return error(res, 404, 'not_found', 'agent agt_1 has no live snapshot');
    if (r.method === 'PATCH') {
      if (r.headers['content-type'] !== 'application/merge-patch+json')
        return error(res, 415, 'unsupported_media_type', 'not a merge patch');
      this.snapshot = {
        state: applyMergePatch(this.snapshot.state, r.body as JsonObject) as JsonObject,
        version: this.snapshot.version + 1,
        ttlMs: Number.isNaN(ttl) ? this.snapshot.ttlMs : ttl,
      };
    }
    return send(res, 200, { snapshot: this.snapshotBody() });
  }

  /** Claim (`POST .../claim`), record (`PUT`) or release (`DELETE ?claimId=`) an effect key. */
  private async effect(
    r: Recorded,
    res: ServerResponse,
    taskId: string,
    key: string,
    isClaim: boolean,
  ): Promise<void> {
    if (!/^[A-Za-z0-9_.:@-]{1,200}$/.test(key))
      return error(res, 400, 'validation_failed', `bad effect key ${JSON.stringify(key)}`);
    const id = effectId(taskId, key);
    const entry = this.effects.get(id);
    const now = this.now();
    if (isClaim && r.method === 'POST') {
      if (this.stale.has(taskId))
        return error(res, 409, 'stale_version', 'version is not current', { currentVersion: 99 });
      const body = r.body as { version: number; claimTtlMs?: number };
      if (entry?.state === 'done')
        return send(res, 200, { outcome: 'done', result: entry.result, doneAt: entry.doneAt });
      if (entry?.state === 'running' && entry.claimExpiresAt > now)
        return send(res, 200, { outcome: 'running', claimExpiresAt: entry.claimExpiresAt });
      const claimId = `clm_${++this.claimSeq}`;
      const claimExpiresAt = now + (body.claimTtlMs ?? 600_000);
      this.effects.set(id, {
        state: 'running',
        claimId,
        version: body.version,
        claimExpiresAt,
        result: null,
        doneAt: null,
      });
      return send(res, 200, { outcome: 'claimed', claimId, claimExpiresAt });
    }
    if (r.method === 'PUT' && !isClaim) {
      const body = r.body as { claimId: string; result?: Json };
      if (entry?.state === 'done')
        return send(res, 200, { outcome: 'done', result: entry.result, doneAt: entry.doneAt });
      if (entry?.claimId !== body.claimId)
        return error(res, 409, 'conflict', `claim ${body.claimId} no longer holds effect ${key}`);
      Object.assign(entry, { state: 'done', result: body.result ?? null, doneAt: now });
      return send(res, 200, { outcome: 'recorded', result: entry.result, doneAt: now });
    }
    if (r.method === 'DELETE' && !isClaim) {
      const released = entry?.state === 'running' && entry.claimId === r.query.get('claimId');
      if (released) this.effects.delete(id);
      return send(res, 200, { released });
    }
    return error(res, 404, 'not_found', `no route ${r.method} ${r.path}`);
  }

  private async claim(r: Recorded, res: ServerResponse): Promise<void> {
    const req = r.body as {
      max?: number;
      waitMs?: number;
      complete?: { taskId: string; version: number; result?: Json }[];
    };
    const completed = (req.complete ?? []).map((c) => {
      if (this.stale.has(c.taskId)) return { taskId: c.taskId, ok: false, code: 'stale_version' };
      if (this.cancelled.has(c.taskId)) return { taskId: c.taskId, ok: false, code: 'invalid_transition' };
      this.completed.set(c.taskId, { version: c.version, result: c.result, via: 'claim' });
      return { taskId: c.taskId, ok: true };
    });
    if (this.queue.length === 0 && (req.waitMs ?? 0) > 0) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waits.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, req.waitMs);
        this.waits.add(wake);
        res.on('close', wake);
      });
    }
    const tasks = this.queue.splice(0, req.max ?? 1);
    if (res.destroyed) {
      this.queue.unshift(...tasks);
      return;
    }
    send(res, 200, req.complete ? { tasks, completed } : { tasks });
  }
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (res.destroyed) return;
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, code: string, message: string, details?: object): void {
  send(res, status, { error: { code, message, details } });
}

/** The key of {@link FakeCoordinator.effects}. */
export function effectId(taskId: string, key: string): string {
  return `${taskId} ${key}`;
}

/** Start a fake coordinator on a free port (or `port`). */
export function startFakeCoordinator(port = 0): Promise<FakeCoordinator> {
  return new FakeCoordinator().listen(port);
}
