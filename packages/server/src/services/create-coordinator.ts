/**
 * `createCoordinator(options)`: assembles the coordinator's services over a Store and a Clock.
 * Nothing runs until `start()` (no timers or I/O at construction); `stop()` ends timers and
 * long-polls, releases the lease shards, but leaves the store open for its owner to close.
 *
 * Several coordinators may share one store (PostgreSQL): the services read time from the store's
 * clock (`store-clock.ts`), sweep only the lease shards they hold (`shard-manager.ts`), relay
 * claimable work to each other (`claimable-relay.ts`) and hold lease expiry while the store is
 * unreachable (`store-health.ts`). With SQLite the same parts run with one coordinator holding all.
 */
import type { Diagnosis } from '@rouse/protocol';
import { RouseError } from '../core/errors.js';
import type { BlobSweepResult } from '../store/blobs.js';
import { createAgentCommands } from './agent-commands.js';
import { createAgentOperations } from './agent-operations.js';
import { createAgentSnapshots } from './agent-snapshots.js';
import { type Alerts, createAlerts } from './alerts/alerts.js';
import { createAuthenticator, requireRead, tokenFingerprints } from './auth.js';
import { createClaimService } from './claim-tasks.js';
import { createClaimWaiters } from './claim-waiters.js';
import { createClaimableRelay } from './claimable-relay.js';
import type { Coordinator } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';
import {
  type CoordinatorOptions,
  type ResolvedCoordinatorOptions,
  resolveCoordinatorOptions,
} from './coordinator-options.js';
import { createDashboardSessions } from './dashboard-sessions.js';
import { createDependencyRegistry } from './dependency-registry.js';
import { diagnoseTask } from './diagnose-task.js';
import * as effects from './effect-keys.js';
import { createEventBus } from './event-bus.js';
import { createEventRelay } from './event-relay.js';
import * as holder from './holder-writes.js';
import { createLeaseExpiry } from './lease-expiry.js';
import { createLogWatchers } from './log-watchers.js';
import { createShardManager, type ShardSet } from './shard-manager.js';
import { createSharedDependencies } from './shared-dependencies.js';
import { createStoreClock } from './store-clock.js';
import { createStoreHealth, monitorStore } from './store-health.js';
import { createBlobs, createSweepers } from './sweepers.js';
import * as taskBlobs from './task-blobs.js';
import * as tasks from './task-operations.js';
import { applyTransition } from './transition-effects.js';
import { createInterventions } from './watchdog/interventions.js';
import { ladderAlertsOf } from './watchdog/ladder-alerts.js';
import { createWatchdog } from './watchdog/watchdog.js';
import { createWatchdogReads } from './watchdog-reads.js';
import { createWriteBatcher } from './write-batcher.js';

/** The coordinator plus hooks for its owner (the server assembly, tests, the bench). */
export interface CoordinatorService extends Coordinator {
  readonly options: ResolvedCoordinatorOptions;
  /** Resolves when no timer-driven work (lease expiry, sweeps) is in flight. */
  whenIdle(): Promise<void>;
  /** Run the overdue-lease safety sweep now (it also runs every `sweepIntervalMs`). */
  sweepNow(): Promise<void>;
  /**
   * Sweep result blobs nothing can read any more now (it also runs every `blobSweepIntervalMs`);
   * null when the blob store does not sweep (files).
   */
  sweepBlobsNow(): Promise<BlobSweepResult | null>;
  /** Numbers for metrics and tests. */
  stats(): CoordinatorStats;
  /** Raise and clear alerts (the server's own parts and tests; the routes read them). */
  readonly alerts: Alerts;
}

export interface CoordinatorStats {
  trackedLeases: number;
  waitingClaims: number;
  /** This coordinator's id in the shard leases. */
  coordinatorId: string;
  /** Lease shards it holds (it sweeps their overdue leases). */
  shards: ShardSet;
  /** Estimated `storeClock − localClock`. */
  clockOffsetMs: number;
  storeUp: boolean;
  storeOutages: number;
  claimableNotices: { published: number; received: number };
  /** Stream notices for the other coordinators' event streams (event-relay.ts). */
  streamNotices: { published: number; received: number };
  /** What this coordinator keeps per agent (pruned when an agent is lost, leaves or is replaced). */
  agentMemory: {
    polls: number;
    tokens: number;
    statuses: number;
    detectorTimers: number;
    leaseTimers: number;
  };
}

export function createCoordinator(options: CoordinatorOptions): CoordinatorService {
  const o = resolveCoordinatorOptions(options);
  // Each part logs as its own component (one `component` key per line, never nested).
  const part = (component: string) => o.logger.child({ component });
  const logger = part('coordinator');
  const rawStore = o.store;
  const clock = createStoreClock({
    local: o.clock,
    store: rawStore,
    logger: part('store-clock'),
    syncIntervalMs: o.clockSyncIntervalMs,
  });
  const health = createStoreHealth({
    store: rawStore,
    clock,
    logger: part('store-health'),
    probeIntervalMs: o.storeProbeIntervalMs,
  });
  const store = monitorStore(rawStore, health);
  const bus = createEventBus(part('events'));
  const shards = createShardManager({
    store,
    clock,
    logger: part('shards'),
    ttlMs: o.shardLeaseTtlMs,
    ...(o.coordinatorId === null ? {} : { ownerId: o.coordinatorId }),
    listening: () => bus.everyCoordinatorListeners > 0,
    tokens: tokenFingerprints(o.tokens),
  });
  const eventRelay = createEventRelay({
    store,
    bus,
    clock,
    origin: shards.ownerId,
    othersListening: () => shards.othersListening(),
    logger: part('event-relay'),
  });
  const relay = createClaimableRelay({
    store,
    waiters: createClaimWaiters(clock),
    origin: shards.ownerId,
    logger: part('claimable'),
    clock,
    othersLive: () => shards.balance().live > 1,
    // The others learn of this coordinator at their next renewal, a third of the TTL after its start.
    settleMs: Math.ceil((2 * o.shardLeaseTtlMs) / 3) + 100,
  });
  const waiters = relay.waiters;
  /** Store time of the last start or outage: shards gained soon after get the restart grace. */
  let disruptedAt = 0;

  // The lease expiry needs the context's effects and the context needs its tracker: tie the knot.
  let ctx: CoordinatorContext;
  // Forgetting a lost agent needs the claim and auth services, made from the context: tie it too.
  let forgetAgent: (agentId: string, how: 'left' | 'lost' | 'replaced') => void = () => undefined;
  const expiry = createLeaseExpiry({
    store,
    clock,
    logger: part('lease-expiry'),
    backoff: o.backoff,
    sweepIntervalMs: o.sweepIntervalMs,
    restartGraceMs: o.restartGraceMs,
    onTransition: (t) => ctx.applyTransition(t),
    shards: () => shards.held(),
    health,
  });
  shards.onChange(async ({ gained }) => {
    // A survivor taking a dead coordinator's shards needs no grace (agents could reach it); a
    // coordinator that just started, or a store that was just away, does.
    if (gained.length === 0 || clock.now() - disruptedAt > 2 * o.shardLeaseTtlMs) return;
    const armed = await expiry.loadWithGrace({ ids: gained, count: shards.held().count });
    // Worth a line when there were leases to arm (after a restart or an outage), not on a fresh start.
    logger[armed > 0 ? 'info' : 'debug'](
      { shards: gained.length, leases: armed },
      'armed the leases of newly held shards with a grace',
    );
  });
  health.onRecovered(async () => {
    disruptedAt = clock.now();
    ctx.watchdog.leases.disrupted();
    await shards.renew();
    await expiry.loadWithGrace(shards.held(), true);
  });
  const writes = createWriteBatcher(store);
  const blobs = createBlobs(store, o);
  const dependencies = createDependencyRegistry({
    clock,
    ttlMs: o.dependencyReportTtlMs,
    onAvailable: () => waiters.notifyAll(),
  });
  const commands = createAgentCommands({
    store,
    clock,
    logger: part('commands'),
    pollMs: o.commandPollMs,
  });
  const alerts = createAlerts({
    store,
    clock,
    bus,
    eventRelay,
    logger: part('alerts'),
    policies: o.policies,
    options: o.alertDelivery,
  });
  const interventions = createInterventions({ store, clock, bus, eventRelay, logger: part('interventions') });
  ctx = {
    options: o,
    store,
    clock,
    logger,
    bus,
    eventRelay,
    leases: expiry.tracker,
    waiters,
    commands,
    interventions,
    alerts,
    dependencies,
    sharedDependencies: createSharedDependencies({
      registry: dependencies,
      store,
      clock,
      logger: part('dependencies'),
      refreshMs: o.dependencyRefreshMs,
    }),
    logWatchers: createLogWatchers(),
    blobs,
    snapshots: createAgentSnapshots({ store, blobs, clock, logger: part('snapshots'), options: o }),
    writes,
    policies: o.policies,
    watchdog: createWatchdog({
      store,
      clock,
      logger: part,
      writes,
      dependencies,
      policies: o.policies,
      bus,
      eventRelay,
      shards: () => shards.held(),
      shardEpoch: (shard) => shards.leases().find((l) => l.shard === shard)?.epoch ?? null,
      health,
      commands,
      interventions,
      alerts: ladderAlertsOf(alerts, o.alertDelivery.maxAttempts),
      applyTransition: (t) => applyTransition(ctx, t),
      terminated: (agentId, reason) => agents.endAgent(agentId, 'terminated', reason),
      ladderSweepMs: o.ladderSweepMs,
      coordinatorId: shards.ownerId,
      agentLeaseSweepMs: o.agentLeaseSweepMs,
      agentLeaseLookaheadMs: o.agentLeaseLookaheadMs,
      baselineFlushMs: o.baselineFlushMs,
      onLost: (agentId) => forgetAgent(agentId, 'lost'),
    }),
    applyTransition: (t) => applyTransition(ctx, t),
  };
  const sweepers = createSweepers(ctx, part);
  const auth = createAuthenticator(o.tokens, store, clock);
  const dashboard = createDashboardSessions({
    store,
    authenticate: auth.authenticate,
    clock,
    logger: part('dashboard'),
    intervalMs: o.effectSweepIntervalMs,
  });
  const claims = createClaimService(ctx);
  forgetAgent = (agentId, how) => {
    if (how === 'left') claims.forgetAgent(agentId);
    else claims.pruneAgent(agentId);
    auth.forgetAgent(agentId);
    ctx.watchdog.agents.forget(agentId);
    if (how === 'replaced') ctx.watchdog.events.forget(agentId);
  };
  const agents = createAgentOperations(ctx, {
    forget: (agentId, how) => forgetAgent(agentId, how),
    confirmed: (agentId, incarnation) => auth.confirmAgent(agentId, incarnation),
  });
  const watchdogReads = createWatchdogReads(ctx);
  let started = false;

  return {
    options: o,
    async start() {
      if (started) return;
      started = true;
      await clock.start();
      disruptedAt = clock.now();
      await shards.start();
      await expiry.start();
      // What other coordinators (or this one before a restart) know of dependencies; a failure here is
      // retried by the periodic refresh.
      await ctx.sharedDependencies
        .refresh()
        .catch((err: unknown) => logger.warn({ err }, 'could not read dependency states'));
      ctx.sharedDependencies.start();
      relay.start();
      eventRelay.start();
      sweepers.start();
      dashboard.start();
      ctx.watchdog.start();
      ctx.alerts.start();
      logger.info(
        {
          store: store.kind,
          coordinatorId: shards.ownerId,
          shards: shards.held().ids.length,
          clockOffsetMs: clock.offsetMs,
        },
        'coordinator started',
      );
    },
    async stop() {
      await ctx.watchdog.stop();
      ctx.alerts.stop();
      sweepers.stop();
      dashboard.stop();
      eventRelay.stop();
      ctx.sharedDependencies.stop();
      relay.stop();
      waiters.stop();
      expiry.stop();
      clock.stop();
      health.stop();
      ctx.dependencies.stop();
      await expiry.idle();
      await ctx.commands.idle();
      await ctx.watchdog.idle();
      await ctx.alerts.idle();
      if (started) await shards.stop();
    },
    whenIdle: async () => {
      await expiry.idle();
      await ctx.commands.idle();
      await ctx.watchdog.idle();
      await ctx.alerts.idle();
    },
    alerts: ctx.alerts,
    sweepNow: () => expiry.sweep(),
    sweepBlobsNow: () => sweepers.sweepBlobs(),
    stats: () => ({
      trackedLeases: expiry.tracker.size,
      waitingClaims: waiters.waiting,
      coordinatorId: shards.ownerId,
      shards: shards.held(),
      clockOffsetMs: clock.offsetMs,
      storeUp: health.up,
      storeOutages: health.outages,
      claimableNotices: { ...relay.stats },
      streamNotices: { ...eventRelay.stats },
      agentMemory: {
        polls: claims.remembered,
        tokens: auth.remembered,
        statuses: ctx.watchdog.events.remembered,
        detectorTimers: ctx.watchdog.agents.watched,
        leaseTimers: ctx.watchdog.leases.armed,
      },
    }),
    authenticate: auth.authenticate,
    dashboard,
    now: () => clock.now(),
    ...watchdogReads,
    async taskSummary(caller, windowMs) {
      requireRead(caller, 'read the task summary');
      const since = clock.now() - windowMs;
      return { since, ...(await store.taskSummary({ since, latencySample: 10_000 })) };
    },

    async createTask(caller, req) {
      const [r] = await tasks.createTasks(ctx, caller, [req]);
      if (r === undefined) throw new RouseError('internal', 'the store returned no created task');
      return r;
    },
    createTasks: (caller, reqs) => tasks.createTasks(ctx, caller, reqs),
    getTask: (caller, id) => tasks.getTask(ctx, caller, id),
    listTasks: (caller, query) => tasks.listTasks(ctx, caller, query),
    listTaskEvents: (caller, id) => tasks.listTaskEvents(ctx, caller, id),
    diagnose: (caller, id): Promise<Diagnosis> => diagnoseTask(ctx, caller, id),
    readLogs: (caller, id, afterSeq) => tasks.readLogs(ctx, caller, id, afterSeq),
    waitForLogs: (id, afterSeq, signal) => tasks.waitForLogs(ctx, id, afterSeq, signal),
    getResult: (caller, id) => tasks.getResult(ctx, caller, id),
    cancelTask: (caller, id, reason) => tasks.cancelTask(ctx, caller, id, reason),
    retryTask: (caller, id) => tasks.retryTask(ctx, caller, id),

    startTask: (caller, id, version) => holder.startTask(ctx, caller, id, version),
    heartbeatTask: (caller, id, req) => holder.heartbeatTask(ctx, caller, id, req),
    checkpointTask: (caller, id, req) => holder.checkpointTask(ctx, caller, id, req),
    claimEffect: (caller, id, key, req) => effects.claimEffect(ctx, caller, id, key, req),
    recordEffect: (caller, id, key, req) => effects.recordEffect(ctx, caller, id, key, req),
    releaseEffect: (caller, id, key, claimId) => effects.releaseEffect(ctx, caller, id, key, claimId),
    sweepEffectsNow: () => sweepers.sweepEffects(),
    putSnapshot: (caller, agentId, req) => ctx.snapshots.put(caller, agentId, req),
    patchSnapshot: (caller, agentId, patch, ttlMs) => ctx.snapshots.patch(caller, agentId, patch, ttlMs),
    getSnapshot: (caller, agentId) => ctx.snapshots.get(caller, agentId),
    sweepSnapshotsNow: () => sweepers.sweepSnapshots(),
    appendLogs: (caller, id, req) => holder.appendLogs(ctx, caller, id, req),
    uploadResult: (caller, id, version, contentType, body) =>
      holder.uploadResult(ctx, caller, id, version, contentType, body),
    uploadTaskBlob: (caller, id, version, contentType, body) =>
      taskBlobs.uploadTaskBlob(ctx, caller, id, version, contentType, body),
    getTaskBlob: (caller, id, blobId) => taskBlobs.getTaskBlob(ctx, caller, id, blobId),
    completeTask: (caller, id, req) => holder.completeTask(ctx, caller, id, req),
    failTask: (caller, id, req) => holder.failTask(ctx, caller, id, req),

    registerAgent: (caller, req) => agents.registerAgent(caller, req),
    claim: (caller, agentId, req, signal) => claims.claim(caller, agentId, req, signal),
    agentHeartbeat: (caller, agentId, req) => agents.agentHeartbeat(caller, agentId, req),
    leave: (caller, agentId) => agents.leave(caller, agentId),
    getAgent: (caller, agentId) => agents.getAgent(caller, agentId),
    listAgents: (caller, query) => agents.listAgents(caller, query),
    sendCommand: (caller, agentId, command) => agents.sendCommand(caller, agentId, command),
    nextCommands: (caller, agentId, req, signal) => agents.nextCommands(caller, agentId, req, signal),
    acknowledgeCommands: (caller, agentId, req) => agents.acknowledgeCommands(caller, agentId, req),
    diagnoseAgent: (caller, agentId) => agents.diagnoseAgent(caller, agentId),
    subscribe: (listener, options) => ctx.bus.subscribe(listener, options),
    ready: () => store.ping(),
  };
}
