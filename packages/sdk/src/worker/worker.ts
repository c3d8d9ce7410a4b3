/**
 * The worker runtime: registers as an agent, claims tasks of its types (long-poll, `concurrency` at
 * a time), runs their handlers, sends one agent heartbeat per interval for everything it holds, and
 * reports results — folded into the next claim when it can, directly otherwise, through the spool
 * when the coordinator is away. Stops gracefully on SIGTERM/SIGINT.
 *
 * @example
 * const worker = new Worker({
 *   url: 'http://127.0.0.1:7070', token: process.env.ROUSE_AGENT_TOKEN!, agentType: 'reviewer',
 *   taskTypes: ['review'], concurrency: 4,
 *   handler: async (task, ctx) => { ctx.progress(0.5, 'reading'); return { ok: true }; },
 * });
 * worker.on('failed', ({ task, error }) => log.warn({ taskId: task.id, error }, 'task failed'));
 * await worker.start();
 */
import { EventEmitter } from 'node:events';
import type {
  Agent,
  AgentSnapshot,
  CommandType,
  DependencyState,
  JsonObject,
  SnapshotWritten,
} from '@rouse/protocol';
import type { Client } from '../client.js';
import { systemNow } from '../clock.js';
import { RouseSdkError } from '../errors.js';
import { backoffDelayMs } from '../retry.js';
import { coordinatorClient } from '../runtime/agent-options.js';
import { ConnectionWatch } from '../runtime/connection.js';
import { type DependencyReportOptions, runWithDependency } from '../runtime/dependencies.js';
import { HeartbeatExchange } from '../runtime/heartbeat-exchange.js';
import { HeartbeatLoop } from '../runtime/heartbeat-loop.js';
import type { HeartbeatStatsView } from '../runtime/heartbeat-stats.js';
import { ProcessMetrics } from '../runtime/process-metrics.js';
import { registerProcess } from '../runtime/register.js';
import { createSafeEmit, type SafeEmit } from '../runtime/safe-emit.js';
import { AgentSnapshots, notRegistered, type SnapshotSaveOptions } from '../runtime/snapshots.js';
import { heartbeatTimeoutFor, leaveTimeoutMs } from '../runtime/timing-options.js';
import { ClaimLoop, claimTimeoutMs } from './claim-loop.js';
import type { WorkerEvents } from './events.js';
import { LogBuffer } from './log-buffer.js';
import { type ResolvedWorkerOptions, resolveWorkerOptions, type WorkerOptions } from './options.js';
import { splitHeartbeat } from './split-heartbeat.js';
import { Spool } from './spool.js';
import { minTaskIntervalMs, workerHeartbeat } from './task-beats.js';
import { type PendingCompletion, TaskRunner } from './task-runner.js';

type WorkerState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/**
 * The commands a worker acts on: wake (handlers' ctx), cancel (aborts the handler) and terminate
 * (stops). A checkpoint is answered once the snapshot is taken at a safe point.
 */
const WORKER_ACTS_ON: readonly CommandType[] = ['wake', 'cancel', 'terminate'];

export class Worker extends EventEmitter<WorkerEvents> {
  readonly options: ResolvedWorkerOptions;
  private readonly client: Client;
  private readonly runner: TaskRunner;
  private readonly loop: ClaimLoop<PendingCompletion>;
  private readonly heartbeats: HeartbeatLoop;
  private readonly logs: LogBuffer;
  private readonly spool: Spool;
  private readonly metrics = new ProcessMetrics();
  private readonly exchange: HeartbeatExchange;
  private readonly snapshots: AgentSnapshots;
  private readonly connection: ConnectionWatch;
  private readonly tokenClients = new Map<string, Client>();
  private readonly startAbort = new AbortController();
  /** Emit without ever throwing into the runtime (a throwing listener is logged). */
  private readonly safeEmit: SafeEmit<WorkerEvents>;
  private state: WorkerState = 'new';
  private agent: Agent | undefined;
  private agentClient: Client | undefined;
  private agentToken = '';
  private agentIntervalMs = 5000;
  private startPromise: Promise<void> | undefined;
  private stopPromise: Promise<void> | undefined;
  private forced = false;
  private endGrace: (() => void) | undefined;
  private signalCount = 0;
  /** The code of the answer that refused the agent's token (`unauthorized`): its leases are gone. */
  private tokenRefused: string | undefined;

  constructor(options: WorkerOptions) {
    super();
    this.options = resolveWorkerOptions(options);
    const o = this.options;
    this.client = coordinatorClient(o);
    this.safeEmit = createSafeEmit<WorkerEvents>(
      this,
      o.logger,
      'worker',
      () => ({ agentId: this.agentId }),
      {
        leaseLost: 'warn',
        spooled: 'warn',
        cancelled: 'info',
        registered: 'info',
        stopped: 'info',
      },
    );
    this.exchange = new HeartbeatExchange({
      agent: () => ({ client: this.agentClient, agentId: this.agentId }),
      timeoutMs: () => heartbeatTimeoutFor(o, this.heartbeatIntervalMs()),
      actsOn: WORKER_ACTS_ON,
      logger: o.logger,
      beatSoon: () => void this.heartbeats.beatSoon(),
      failed: (error) => this.heartbeatFailed(error),
      error: (error) => this.safeEmit('error', { error, op: 'heartbeat' }),
      // its tasks went back to the queue already: this process must not keep working on them
      refused: (error) => {
        this.tokenRefused ??= error.code;
        void this.stop({ graceful: false });
      },
      answered: (part, res) => {
        this.connection.ok();
        if (o.heartbeatIntervalMs === undefined && res.heartbeatIntervalMs > 0) {
          this.agentIntervalMs = res.heartbeatIntervalMs;
        }
        this.runner.applyHeartbeat(res, part.tasks ?? []);
        this.safeEmit('heartbeat', { request: part, response: res });
      },
      command: (command) => {
        if (command.type === 'terminate') void this.stop();
        else if (
          command.type === 'checkpoint' &&
          this.snapshots.checkpointRequested(command.id, command.ttlMs)
        ) {
          this.idleSafePoint();
        }
        this.safeEmit('command', { command });
      },
    });
    this.spool = new Spool(o.spoolDir);
    this.connection = new ConnectionWatch({
      url: o.url,
      logger: o.logger,
      now: systemNow,
      onDown: (error) => {
        this.loop.interrupt();
        this.client.close(); // idle sockets may be dead too: the next request opens a fresh one
        this.safeEmit('disconnected', { error });
      },
      onUp: (downMs, silent) => {
        this.loop.reconnect(silent);
        this.safeEmit('reconnected', { downMs });
        this.onReachable();
      },
    });
    this.logs = new LogBuffer({
      flushIntervalMs: o.logFlushIntervalMs,
      send: async (run, lines) => {
        await this.agentApi().appendLogs(run.task.id, { version: run.version, lines });
      },
      onError: (run, error) => this.safeEmit('error', { error, op: 'logs', taskId: run.task.id }),
    });
    this.runner = new TaskRunner({
      handlers: o.handlers,
      client: () => this.agentApi(),
      agentToken: () => this.agentToken,
      clientFor: (token) => this.clientFor(token),
      carry: (item) => this.loop.carry(item),
      slotsFreed: () => {
        this.loop.schedule();
        this.idleSafePoint();
      },
      spool: this.spool,
      logs: this.logs,
      emit: this.safeEmit,
      dependencies: this.exchange.dependencies,
      beatSoon: () => this.heartbeats.beatSoon(),
      safePoint: () => this.snapshots.atSafePoint(),
    });
    this.loop = new ClaimLoop<PendingCompletion>({
      types: o.taskTypes,
      concurrency: o.concurrency,
      waitMs: o.waitMs,
      busySlots: () => this.runner.busy + this.runner.waiting,
      claim: (req, signal) => {
        const timeoutMs = claimTimeoutMs(req.waitMs ?? 0, o.requestTimeoutMs);
        return this.agentApi().claim(this.agentId!, req, { signal, timeoutMs });
      },
      onTasks: (tasks) => {
        this.runner.accept(tasks);
        this.heartbeats.nudge();
      },
      onCarried: (items, outcomes) => this.runner.onCarried(items, outcomes),
      onUncarried: (items) => this.runner.sendUncarried(items),
      onReachable: () => {
        this.connection.ok();
        this.onReachable();
      },
      connectionDown: () => this.connection.down,
      onError: (error) => {
        this.safeEmit('error', { error, op: 'claim' });
        this.connection.failed(error);
      },
      backoffMs: (failures) => backoffDelayMs(failures, o.retry),
    });
    this.heartbeats = new HeartbeatLoop({
      intervalMs: () => this.heartbeatIntervalMs(),
      beat: () => this.beat(),
    });
    this.snapshots = new AgentSnapshots(o, {
      agent: () => {
        if (!this.agentClient || this.agentId === undefined) throw notRegistered('worker');
        return { client: this.agentClient, agentId: this.agentId };
      },
      answer: (ack) => this.exchange.answers.add(ack),
    });
  }

  private heartbeatIntervalMs(): number {
    return Math.min(this.agentIntervalMs, minTaskIntervalMs(this.runner.held.values()));
  }

  /** A heartbeat try failed: at the network level, the connection is lost and claims in flight are dead. */
  private heartbeatFailed(error: unknown): void {
    if (this.connection.failed(error)) this.loop.interrupt();
  }

  /** How its heartbeats are going (sent, failed, the last one answered): for the agent's own metrics. */
  get heartbeatStats(): HeartbeatStatsView {
    return this.exchange.stats.current;
  }

  /** The agent id given at registration (undefined before `start()` resolved). */
  get agentId(): string | undefined {
    return this.agent?.id;
  }

  /** This process's incarnation of the agent slot (1 unless it registered again under its `key`). */
  get incarnation(): number | undefined {
    return this.agent?.incarnation;
  }

  /**
   * Report what this worker knows of dependency `name` (an external service); it rides on the next
   * heartbeat. Handlers usually call `ctx.withDependency(name, fn)` instead.
   */
  dependency(name: string, state: DependencyState, options: DependencyReportOptions = {}): void {
    this.exchange.dependencies.observe(name, state, options);
  }

  /** Run `fn` and report what its outcome says about dependency `name` (see `ctx.withDependency`). */
  withDependency<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    return runWithDependency(this.exchange.dependencies, name, fn);
  }

  /**
   * The snapshot the previous incarnation of this agent slot left (same `key`), handed over at
   * registration — or null. Set once `start()` resolved.
   */
  get restoredSnapshot(): AgentSnapshot | null {
    return this.snapshots.restored;
  }

  /**
   * The state of {@link restoredSnapshot} (a copy), or null. `T` names its shape
   * (`worker.restore<{ cursor: number }>()`); it is not checked: the state is what the last incarnation saved.
   */
  restore<T extends JsonObject = JsonObject>(): T | null {
    return this.snapshots.restore<T>();
  }

  /**
   * Store `state` (a JSON object) as this agent's snapshot (its own state, apart from its tasks'
   * checkpoints); `incremental: true` sends only what changed since the last stored state when it can.
   * A `checkpoint` command takes the `snapshot` option's state at the next `ctx.safePoint()` of a
   * handler, or at once when no handler runs.
   */
  snapshot(
    state: JsonObject,
    options: SnapshotSaveOptions & { incremental?: boolean } = {},
  ): Promise<SnapshotWritten> {
    const { incremental, ...save } = options;
    return incremental ? this.snapshots.save(state, save) : this.snapshots.snapshot(state, save);
  }

  /** Apply a JSON merge patch to the stored snapshot; `404 not_found` when there is none. */
  snapshotPatch(patch: JsonObject, options: SnapshotSaveOptions = {}): Promise<SnapshotWritten> {
    return this.snapshots.snapshotPatch(patch, options);
  }

  /** No handler runs: the worker is at a safe point, a requested snapshot is taken now. */
  private idleSafePoint(): void {
    if (this.snapshots.pending && this.runner.busy === 0 && this.state === 'running') {
      void this.snapshots.atSafePoint();
    }
  }

  /**
   * Register with the coordinator and start claiming. Resolves once registered; the work runs in the
   * background until {@link stop}. A coordinator that cannot be reached yet is waited for, up to
   * `startTimeoutMs`; rejects when that runs out or registration is refused (the worker may be started
   * again), or when `stop()` is called meanwhile.
   */
  start(): Promise<void> {
    if (this.state !== 'new') {
      return Promise.reject(
        new RouseSdkError(`start() called on a worker that is ${this.state}`, { code: 'invalid_state' }),
      );
    }
    this.state = 'starting';
    this.startPromise = this.register();
    return this.startPromise;
  }

  /**
   * Stop: no more claims; running handlers get `shutdownGraceMs` to finish (none when `graceful` is
   * false), the rest are aborted (`WorkerShutdownError`); reports are delivered or spooled, logs
   * flushed, and the agent leaves (`DELETE /v1/agents/{id}`), which hands the aborted tasks back at
   * once (`timeout`, claimable without backoff; the attempt counts). Resolves when
   * all of that is done; calling it again returns the same promise (with `graceful: false` it cuts the
   * grace short).
   */
  stop(options: { graceful?: boolean } = {}): Promise<void> {
    if (options.graceful === false) {
      this.forced = true;
      this.endGrace?.();
    }
    if (this.stopPromise) return this.stopPromise;
    if (this.state === 'starting') {
      this.startAbort.abort(
        new RouseSdkError('stop() was called before the worker registered', { code: 'stopped' }),
      );
    }
    if (this.state === 'new' || this.state === 'stopped') {
      this.state = 'stopped';
      return Promise.resolve();
    }
    this.stopPromise = this.shutdown();
    return this.stopPromise;
  }

  private async register(): Promise<void> {
    const o = this.options;
    try {
      const reg = await registerProcess(this.client, o, this.startAbort.signal, systemNow, o.taskTypes);
      this.agent = reg.agent;
      this.agentToken = reg.token;
      this.agentClient = this.client.withToken(reg.token);
      this.snapshots.registered(reg.snapshot);
      this.agentIntervalMs = o.heartbeatIntervalMs ?? reg.heartbeatIntervalMs;
      this.safeEmit('registered', { agent: reg.agent, heartbeatIntervalMs: this.agentIntervalMs });
    } catch (err) {
      this.state = 'new';
      throw err;
    }
    this.state = 'running';
    for (const sig of o.shutdownSignals) process.on(sig, this.onSignal);
    this.metrics.start();
    this.heartbeats.start();
    this.loop.start();
    void this.spool
      .load((error) => this.safeEmit('error', { error, op: 'spool' }))
      .then(() => this.onReachable());
  }

  private async shutdown(): Promise<void> {
    await this.startPromise?.catch(() => {});
    if (this.state !== 'running') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    this.runner.stopping = true;
    this.runner.sendUncarried(await this.loop.stop());
    if (this.runner.busy > 0 && !this.forced) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.endGrace = resolve;
        timer = setTimeout(resolve, this.options.shutdownGraceMs);
        void this.runner.idle().then(resolve);
      });
      clearTimeout(timer);
      this.endGrace = undefined;
    }
    this.runner.abortRunning(this.tokenRefused);
    await this.runner.drainReports();
    await this.logs.flushAll();
    this.logs.stop();
    if (this.spool.size > 0) await this.runner.deliverSpool();
    await this.heartbeats.stop();
    this.metrics.stop();
    try {
      await this.agentApi().leave(this.agentId!, { timeoutMs: leaveTimeoutMs(this.options) });
    } catch (error) {
      this.safeEmit('error', { error, op: 'leave' });
    }
    for (const sig of this.options.shutdownSignals) process.removeListener(sig, this.onSignal);
    this.client.close();
    this.state = 'stopped';
    this.safeEmit('stopped');
  }

  private async beat(): Promise<void> {
    const req = workerHeartbeat(this.runner.held, this.metrics.sample(), this.exchange.stats.current.failed);
    if (await this.exchange.send(req, splitHeartbeat)) this.onReachable();
  }

  /** The coordinator answered: a good moment to empty the spool. */
  private onReachable(): void {
    if (this.spool.size > 0 && this.state === 'running') void this.runner.deliverSpool();
  }

  private readonly onSignal = (): void => {
    this.signalCount++;
    // a second signal cuts the grace short
    void this.stop({ graceful: this.signalCount < 2 });
  };

  private agentApi(): Client {
    if (!this.agentClient)
      throw new RouseSdkError('the worker is not registered; call start() first', { code: 'invalid_state' });
    return this.agentClient;
  }

  private clientFor(token: string): Client {
    let c = this.tokenClients.get(token);
    if (!c) {
      c = this.client.withToken(token);
      this.tokenClients.set(token, c);
    }
    return c;
  }
}
