/**
 * Monitor mode (docs/design.md §6.6): the watchdog's heartbeats for an agent that is not a task worker — a
 * chat bot, a loop, a long conversation. It registers, heartbeats on a timer (±10 % jitter) with the
 * agent's status, progress, metadata, iteration timing, process metrics and dependency reports, and
 * hands `wake` commands to the code (`onWake`, `interrupted`, `safePoint()`). It keeps the agent's
 * snapshot: what the previous incarnation saved (`restore()`), and this one's (`snapshot()`, or the
 * `snapshot` option taken at a safe point when the watchdog asks). Nothing in the agent's
 * logic has to change: a few calls where it already knows something.
 *
 * @example
 * const m = monitor({ url: 'http://127.0.0.1:7070', token: process.env.ROUSE_AGENT_TOKEN!, agentType: 'chat-bot' });
 * await m.start();
 * while (!m.signal.aborted) {
 *   await m.iteration(async () => {
 *     const msg = await inbox.next({ signal: m.signal });
 *     await m.withDependency('openai', () => reply(msg));
 *   });
 *   if (await m.safePoint()) inbox.reconnect(); // a `wake` arrived
 * }
 * await m.stop();
 */
import { EventEmitter } from 'node:events';
import type {
  Agent,
  AgentHeartbeatRequest,
  AgentSnapshot,
  CommandType,
  DependencyState,
  Json,
  JsonObject,
  SnapshotWritten,
} from '@rouse/protocol';
import type { Client } from '../client.js';
import { systemNow } from '../clock.js';
import { RouseSdkError } from '../errors.js';
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
import { WakeState } from '../runtime/wake-state.js';
import type { MonitorEvents } from './events.js';
import { IterationClock } from './iteration-clock.js';
import { type MonitorOptions, type ResolvedMonitorOptions, resolveMonitorOptions } from './options.js';
import { type MonitorStatus, ReportedState } from './reported-state.js';

type MonitorState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

export type { MonitorStatus } from './reported-state.js';

/** Create a {@link Monitor} (not started). */
export function monitor(options: MonitorOptions): Monitor {
  return new Monitor(options);
}

/**
 * The commands a monitor acts on: wake (onWake, interrupted) and terminate (stops). A checkpoint is
 * answered at a safe point.
 */
const MONITOR_ACTS_ON: readonly CommandType[] = ['wake', 'terminate'];

export class Monitor extends EventEmitter<MonitorEvents> {
  readonly options: ResolvedMonitorOptions;
  private readonly client: Client;
  private readonly heartbeats: HeartbeatLoop;
  private readonly processMetrics = new ProcessMetrics();
  private readonly exchange: HeartbeatExchange;
  private readonly snapshots: AgentSnapshots;
  private readonly wakes = new WakeState();
  private readonly iterations = new IterationClock();
  private readonly connection: ConnectionWatch;
  private readonly safeEmit: SafeEmit<MonitorEvents>;
  private readonly startAbort = new AbortController();
  private readonly stopAbort = new AbortController();
  private state: MonitorState = 'new';
  private agentInfo: Agent | undefined;
  private agentClient: Client | undefined;
  private intervalMs = 5000;
  private readonly self: ReportedState;
  private startPromise: Promise<void> | undefined;
  private stopPromise: Promise<void> | undefined;

  constructor(options: MonitorOptions) {
    super();
    this.options = resolveMonitorOptions(options);
    const o = this.options;
    this.self = new ReportedState(o.metadata);
    this.client = coordinatorClient(o);
    this.safeEmit = createSafeEmit<MonitorEvents>(
      this,
      o.logger,
      'monitor',
      () => ({ agentId: this.agentId }),
      {
        registered: 'info',
        wake: 'info',
        stopped: 'info',
      },
    );
    this.connection = new ConnectionWatch({
      url: o.url,
      logger: o.logger,
      now: systemNow,
      onDown: (error) => {
        this.client.close();
        this.safeEmit('disconnected', { error });
      },
      onUp: (downMs) => this.safeEmit('reconnected', { downMs }),
    });
    this.heartbeats = new HeartbeatLoop({ intervalMs: () => this.intervalMs, beat: () => this.beat() });
    this.exchange = new HeartbeatExchange({
      agent: () => ({ client: this.agentClient, agentId: this.agentId }),
      timeoutMs: () => heartbeatTimeoutFor(o, this.intervalMs),
      actsOn: MONITOR_ACTS_ON,
      logger: o.logger,
      beatSoon: () => void this.heartbeats.beatSoon(),
      failed: (error) => this.connection.failed(error),
      error: (error) => {
        this.self.unsent = true;
        this.safeEmit('error', { error, op: 'heartbeat' });
      },
      refused: () => void this.stop(),
      answered: (part, res) => {
        this.connection.ok();
        if (o.heartbeatIntervalMs === undefined && res.heartbeatIntervalMs > 0) {
          this.intervalMs = res.heartbeatIntervalMs;
        }
        this.safeEmit('heartbeat', { request: part, response: res });
      },
      command: (command) => {
        if (command.type === 'wake') {
          this.wakes.wake(command.reason, (error) => this.safeEmit('error', { error, op: 'onWake' }));
          this.safeEmit('wake', { reason: command.reason });
        } else if (command.type === 'terminate') void this.stop();
        else if (command.type === 'checkpoint') this.snapshots.checkpointRequested(command.id, command.ttlMs);
        this.safeEmit('command', { command });
      },
    });
    this.snapshots = new AgentSnapshots(o, {
      agent: () => {
        if (!this.agentClient || this.agentId === undefined) throw notRegistered('monitor');
        return { client: this.agentClient, agentId: this.agentId };
      },
      answer: (ack) => this.exchange.answers.add(ack),
    });
  }

  /** How its heartbeats are going (sent, failed, the last one answered): for the agent's own metrics. */
  get heartbeatStats(): HeartbeatStatsView {
    return this.exchange.stats.current;
  }

  /** The agent id given at registration (undefined before `start()` resolved). */
  get agentId(): string | undefined {
    return this.agentInfo?.id;
  }

  /** This process's incarnation of the agent slot (1 unless it registered again under its `key`). */
  get incarnation(): number | undefined {
    return this.agentInfo?.incarnation;
  }

  /** Aborts when the monitor stops (`stop()`, SIGTERM/SIGINT, a `terminate` command): end your loop. */
  get signal(): AbortSignal {
    return this.stopAbort.signal;
  }

  /** True after a `wake` command until the next {@link safePoint}. */
  get interrupted(): boolean {
    return this.wakes.interrupted;
  }

  /** What the agent reports itself as now. */
  get reportedStatus(): MonitorStatus {
    return this.self.status;
  }

  /** The latest state of every dependency observed, by name. */
  get dependencies(): Record<string, DependencyState> {
    return this.exchange.dependencies.states();
  }

  /**
   * Register (key from the options or `ROUSE_AGENT_KEY`, supervisor from `ROUSE_SUPERVISOR_ID`), send a
   * first heartbeat at once, then one per interval. Waits for a coordinator not up yet up to
   * `startTimeoutMs`; rejects when that runs out, registration is refused, or `stop()` is called.
   */
  start(): Promise<void> {
    if (this.state !== 'new') {
      return Promise.reject(
        new RouseSdkError(`start() called on a monitor that is ${this.state}`, { code: 'invalid_state' }),
      );
    }
    this.state = 'starting';
    this.startPromise = this.register();
    return this.startPromise;
  }

  /**
   * Stop: abort {@link signal}, send what changed since the last heartbeat, and leave (`DELETE
   * /v1/agents/{id}`). Never rejects (failures are `error` events); calling it again returns the same promise.
   */
  stop(): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    if (this.state === 'new' || this.state === 'stopped') {
      this.state = 'stopped';
      this.stopAbort.abort(new RouseSdkError('the monitor stopped', { code: 'stopped' }));
      return Promise.resolve();
    }
    if (this.state === 'starting') {
      this.startAbort.abort(
        new RouseSdkError('stop() was called before the monitor registered', { code: 'stopped' }),
      );
    }
    this.stopPromise = this.shutdown();
    return this.stopPromise;
  }

  /** Report progress in [0, 1] (and a phase, ≤ 256 characters); rides on the next heartbeat. */
  progress(value: number, phase?: string): void {
    this.self.setProgress(value, phase);
  }

  /** Report what the agent is doing (≤ 256 characters); rides on the next heartbeat. */
  phase(text: string): void {
    this.self.setPhase(text);
  }

  /**
   * Merge `patch` into the metadata sent with every heartbeat (`undefined` removes a key); the policy's
   * `stall_detection.progress_field` is read from it. Throws when the result would pass 2048 characters
   * of JSON (the metadata is then unchanged).
   */
  metadata(patch: Record<string, Json | undefined>): void {
    this.self.mergeMetadata(patch);
  }

  /** Report the agent's own status; `message` (trimmed to 1024 characters) says why, with `error`. */
  status(status: MonitorStatus, message?: string): void {
    this.self.setStatus(status, message);
  }

  /** `status('error', message)`: the watchdog opens `error_persisting` if it lasts past the policy's `error_timeout`. */
  error(message: string): void {
    this.status('error', message);
  }

  /** Back to `running` after an {@link error} (no-op otherwise). */
  clearError(): void {
    if (this.self.status === 'error') this.status('running');
  }

  /**
   * Run one step of the agent's loop and time it: the heartbeat reports `metrics.iterationMs`, and
   * (unless `iterationsField` is false) `metadata.iterations` counts the steps. Returns fn's value or
   * rethrows its error (the step still counts).
   */
  async iteration<T>(fn: () => Promise<T> | T): Promise<T> {
    const id = this.iterations.begin();
    let error: unknown;
    try {
      return await fn();
    } catch (err) {
      error = err;
      throw err;
    } finally {
      const durationMs = this.iterations.end(id);
      const count = this.iterations.count;
      const field = this.options.iterationsField;
      if (field !== undefined) this.self.setField(field, count);
      else this.self.unsent = true;
      this.safeEmit('iteration', error === undefined ? { durationMs, count } : { durationMs, count, error });
    }
  }

  /** Report what the agent knows of dependency `name`; rides on the next heartbeat (a repeated `up` is not resent). */
  dependency(name: string, state: DependencyState, options: DependencyReportOptions = {}): void {
    this.exchange.dependencies.observe(name, state, options);
  }

  /**
   * Run `fn` (a call to an external service) and report what it revealed about dependency `name`: a 429
   * with Retry-After → `rate_limited`; a 5xx, a refused / reset / timed-out connection → `down`; an
   * answer → `up`. Returns fn's value or rethrows its error unchanged.
   */
  withDependency<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    return runWithDependency(this.exchange.dependencies, name, fn);
  }

  /** Run `fn(reason)` on every `wake` command; returns a function that unsubscribes. */
  onWake(fn: (reason: string | undefined) => void): () => void {
    return this.wakes.onWake(fn);
  }

  /**
   * A safe point of the agent's loop: resolves true when a `wake` was pending (and clears
   * {@link interrupted}), so the code can act here: `if (await m.safePoint()) resetConnection()`.
   * A snapshot requested by a `checkpoint` command is taken here first (the `snapshot` option's state,
   * stored before this resolves; a failure is acknowledged `failed`, never thrown).
   */
  async safePoint(): Promise<boolean> {
    await this.snapshots.atSafePoint();
    return this.wakes.safePoint();
  }

  /** True while a `checkpoint` command waits for the next {@link safePoint}. */
  get checkpointRequested(): boolean {
    return this.snapshots.pending;
  }

  /**
   * The snapshot the previous incarnation of this agent slot left (same `key`), handed over at
   * registration — or null (none, it expired, or the agent has no key). Set once `start()` resolved.
   */
  get restoredSnapshot(): AgentSnapshot | null {
    return this.snapshots.restored;
  }

  /**
   * The state of {@link restoredSnapshot} (a copy to use freely), or null. `T` names its shape
   * (`m.restore<{ cursor: number }>()`); it is not checked: the state is what the last incarnation saved.
   */
  restore<T extends JsonObject = JsonObject>(): T | null {
    return this.snapshots.restore<T>();
  }

  /**
   * Store `state` (a JSON object) as this agent's snapshot, kept `ttlMs` after this write (default:
   * the `snapshotTtlMs` option, else 24 h). With `incremental: true` only what changed since the last
   * stored state is sent (a merge patch), when it can be.
   */
  snapshot(
    state: JsonObject,
    options: SnapshotSaveOptions & { incremental?: boolean } = {},
  ): Promise<SnapshotWritten> {
    const { incremental, ...save } = options;
    return incremental ? this.snapshots.save(state, save) : this.snapshots.snapshot(state, save);
  }

  /**
   * Apply a JSON merge patch (RFC 7386: `null` removes a member) to the stored snapshot; rejects with
   * `404 not_found` when there is none to patch (store a full one with {@link snapshot}).
   */
  snapshotPatch(patch: JsonObject, options: SnapshotSaveOptions = {}): Promise<SnapshotWritten> {
    return this.snapshots.snapshotPatch(patch, options);
  }

  // ---- internals ---------------------------------------------------------------------------------

  private async register(): Promise<void> {
    const o = this.options;
    try {
      const reg = await registerProcess(this.client, o, this.startAbort.signal, systemNow);
      this.agentInfo = reg.agent;
      this.agentClient = this.client.withToken(reg.token);
      this.snapshots.registered(reg.snapshot);
      this.intervalMs = o.heartbeatIntervalMs ?? reg.heartbeatIntervalMs;
      const incarnation = reg.incarnation ?? reg.agent.incarnation;
      this.safeEmit('registered', { agent: reg.agent, incarnation, heartbeatIntervalMs: this.intervalMs });
    } catch (err) {
      this.state = this.startAbort.signal.aborted ? 'stopped' : 'new';
      throw err;
    }
    this.state = 'running';
    for (const sig of o.shutdownSignals) process.on(sig, this.onSignal);
    if (o.metrics) this.processMetrics.start();
    this.heartbeats.start({ immediately: true });
  }

  private async shutdown(): Promise<void> {
    this.stopAbort.abort(new RouseSdkError('the monitor stopped', { code: 'stopped' }));
    await this.startPromise?.catch(() => {});
    if (this.state !== 'running') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    await this.heartbeats.stop();
    // the last word (final progress, an error) — unless the coordinator is away: no waiting then
    if ((this.self.unsent || this.exchange.dependencies.pending) && !this.connection.down) await this.beat();
    this.processMetrics.stop();
    try {
      await this.agentClient!.leave(this.agentId!, { timeoutMs: leaveTimeoutMs(this.options) });
    } catch (error) {
      this.safeEmit('error', { error, op: 'leave' });
    }
    for (const sig of this.options.shutdownSignals) process.removeListener(sig, this.onSignal);
    this.client.close();
    this.state = 'stopped';
    this.safeEmit('stopped');
  }

  private request(): AgentHeartbeatRequest {
    const req = this.self.request();
    const metrics = this.options.metrics ? this.processMetrics.sample() : {};
    const iterationMs = this.iterations.take();
    if (iterationMs !== undefined) metrics.iterationMs = iterationMs;
    const failures = this.exchange.stats.current.failed;
    if (failures > 0) metrics.heartbeatFailures = failures;
    if (Object.keys(metrics).length > 0) req.metrics = metrics;
    return req;
  }

  private async beat(): Promise<void> {
    const req = this.request();
    this.self.unsent = false; // until the beat fails
    await this.exchange.send(req);
  }

  private readonly onSignal = (): void => {
    void this.stop();
  };
}
