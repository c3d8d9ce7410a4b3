/**
 * The PostgreSQL backend of the Store contract (node-postgres), for several coordinators sharing one
 * database (docs/design.md §8), composed of its parts (tasks, agents, coordination, watchdog, interventions, effect keys, task blobs, agent snapshots, alerts). Nearly
 * every operation is one statement on a pooled connection — its conditional write, history entries
 * and returned rows together — so it is atomic and costs one round trip; batches (heartbeats,
 * completions, creates) are one statement for the whole batch. The few writes that must lock an
 * agent before reading its conditions (changing them, replacing an incarnation, ending an agent) are
 * one short transaction.
 *
 * Time is the database's: each statement computes `now()` itself, so coordinators with skewed clocks
 * agree on every lease (docs/design.md §3). Tests inject a `Clock`, whose time is passed instead.
 *
 * While the database is unreachable every call fails fast with `unavailable` (503); the pool and the
 * LISTEN connection reconnect by themselves when it is back.
 */
import pg from 'pg';
import { UnavailableError } from '../../core/errors.js';
import { checkLedger } from '../migrations.js';
import type {
  AgentStore,
  AlertStore,
  CoordinationStore,
  EffectStore,
  InterventionStore,
  SessionStore,
  SnapshotStore,
  Store,
  TaskBlobStore,
  TaskStore,
  WatchdogStore,
} from '../store.js';
import { ADMIN_SQL, notifyAsyncSql } from './admin-statements.js';
import { ledgerOnClient, migrateOnClient, POSTGRES_MIGRATIONS } from './migrate.js';
import {
  NoticeListener,
  noticePayloads,
  parseClaimableNotice,
  parseStreamNotice,
  streamNoticePayloads,
} from './notice-listener.js';
import * as agents from './postgres-agents.js';
import * as alerts from './postgres-alerts.js';
import { createPostgresBlobStore } from './postgres-blobs.js';
import { PgContext, pgConfig } from './postgres-context.js';
import * as effects from './postgres-effects.js';
import { toStoreError } from './postgres-errors.js';
import * as interventions from './postgres-interventions.js';
import {
  claimableChannel,
  type PostgresStoreOptions,
  type ResolvedPostgresStoreOptions,
  resolvePostgresStoreOptions,
  transitionsChannel,
} from './postgres-options.js';
import * as sessions from './postgres-sessions.js';
import * as shards from './postgres-shards.js';
import * as snapshots from './postgres-snapshots.js';
import * as admin from './postgres-task-admin.js';
import * as taskBlobs from './postgres-task-blobs.js';
import * as reads from './postgres-task-reads.js';
import * as writes from './postgres-task-writes.js';
import * as watchdog from './postgres-watchdog.js';

async function prepareSchema(pool: pg.Pool, opts: ResolvedPostgresStoreOptions): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toStoreError(err);
  }
  try {
    if (opts.migrate) {
      await migrateOnClient(client, opts.schema, opts.clock === 'database' ? null : opts.clock.now());
    } else {
      checkLedger(await ledgerOnClient(client, opts.schema), POSTGRES_MIGRATIONS, true);
    }
    client.release();
  } catch (err) {
    client.release(true);
    throw toStoreError(err);
  }
}

/**
 * Connect to PostgreSQL and (unless `migrate: false`) bring the schema up to date. Throws
 * `unavailable` when the database cannot be reached within `connectTimeoutMs`, or its schema was
 * written by a newer build (or, with migrations off, is behind this one).
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const opts = resolvePostgresStoreOptions(options);
  const pool = new pg.Pool({ ...pgConfig(opts, opts.statementTimeoutMs, true), max: opts.poolSize });
  // An idle connection that breaks is dropped by the pool; without a listener the event would crash.
  pool.on('error', () => undefined);
  // The pool listens for errors only on idle connections. One that breaks while checked out (a server
  // shutting down between our statements, or while we discard it) would emit an unheard 'error' and
  // crash the process; its failure already reaches the caller through the statement's rejection.
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await prepareSchema(pool, opts);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  const ctx = new PgContext(pool, opts);
  const listener = new NoticeListener(pgConfig(opts), claimableChannel(opts.schema), parseClaimableNotice);
  const eventsListener = new NoticeListener(
    pgConfig(opts),
    transitionsChannel(opts.schema),
    parseStreamNotice,
  );

  /** NOTIFY `payloads` on `on`'s channel, once our own LISTEN there is in place (so our subscribers hear it too). */
  const notify = async (
    on: Pick<NoticeListener<never>, 'channel' | 'listening'>,
    payloads: string[],
  ): Promise<void> => {
    await on.listening();
    for (const payload of payloads) await ctx.run('notify', notifyAsyncSql(on.channel, payload), []);
  };

  const op =
    <A extends unknown[], R>(fn: (ctx: PgContext, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      ctx.closed ? Promise.reject(new UnavailableError('the store is closed')) : fn(ctx, ...args);

  const tasks: TaskStore = {
    createTasks: op(admin.createTasks),
    getTask: op(reads.getTask),
    listTasks: op(reads.listTasks),
    listTaskEvents: op(reads.listTaskEvents),
    taskSummary: op(reads.taskSummary),
    claimTasks: op(writes.claimTasks),
    startTask: op(writes.startTask),
    recordHeartbeats: op(writes.recordHeartbeats),
    saveCheckpoint: op(writes.saveCheckpoint),
    appendLogs: op(writes.appendLogs),
    readLogs: op(reads.readLogs),
    setResultRef: op(writes.setResultRef),
    completeTasks: op(writes.completeTasks),
    completeAndClaim: op(writes.completeAndClaim),
    failTask: op(writes.failTask),
    expireLease: op(admin.expireLease),
    completeFromResultRef: op(admin.completeFromResultRef),
    cancelTask: op(admin.cancelTask),
    retryTask: op(admin.retryTask),
    releaseAgentTasks: op(admin.releaseAgentTasks),
    activeLeases: op(reads.activeLeases),
    nextClaimableAt: op(reads.nextClaimableAt),
    queueStats: op(reads.queueStats),
    createBlobStore: (blobOptions) => createPostgresBlobStore(ctx, blobOptions),
  };
  const agentStore: AgentStore = {
    registerAgent: op(agents.registerAgent),
    getAgent: op(agents.getAgent),
    resolveAgentToken: op(agents.resolveAgentToken),
    listAgents: op(agents.listAgents),
    recordAgentHeartbeats: op(agents.recordAgentHeartbeats),
    recordPoll: op(agents.recordPoll),
    endAgent: op(agents.endAgent),
    queueAgentCommand: op(agents.queueAgentCommand),
    clearAgentCommands: op(agents.clearAgentCommands),
    takeAgentCommands: op(agents.takeAgentCommands),
  };
  const coordination: CoordinationStore = {
    acquireShardLeases: op(shards.acquireShardLeases),
    releaseShardLeases: op(shards.releaseShardLeases),
    listShardLeases: op(shards.listShardLeases),
    announceCoordinator: op(shards.announceCoordinator),
    listCoordinators: op(shards.listCoordinators),
    publishClaimable: (notice) => notify(listener, noticePayloads(notice)),
    onClaimable: (subscriber) => listener.subscribe(subscriber),
    publishStreamNotice: (notice) => notify(eventsListener, streamNoticePayloads(notice)),
    onStreamNotices: (subscriber) => eventsListener.subscribe(subscriber),
    readTransitions: op(reads.readTransitions),
  };
  const watchdogStore: WatchdogStore = {
    applyConditionChanges: op(watchdog.applyConditionChanges),
    listConditions: op(watchdog.listConditions),
    readConditions: op(watchdog.readConditions),
    getAgentWatches: op(watchdog.getAgentWatches),
    dueAgentLeases: op(watchdog.dueAgentLeases),
    markAgentsLost: op(watchdog.markAgentsLost),
    saveBaselines: op(watchdog.saveBaselines),
    listBaselines: op(watchdog.listBaselines),
    agentStatusCounts: op(watchdog.agentStatusCounts),
    saveDependency: op(watchdog.saveDependency),
    listDependencies: op(watchdog.listDependencies),
  };
  const taskBlobStore: TaskBlobStore = {
    recordTaskBlob: op(taskBlobs.recordTaskBlob),
    getTaskBlob: op(taskBlobs.getTaskBlob),
    isTaskBlobKey: op(taskBlobs.isTaskBlobKey),
  };
  const effectStore: EffectStore = {
    claimEffect: op(effects.claimEffect),
    recordEffect: op(effects.recordEffect),
    releaseEffect: op(effects.releaseEffect),
    deleteExpiredEffects: op(effects.deleteExpiredEffects),
  };
  const interventionStore: InterventionStore = {
    openIntervention: op(interventions.openIntervention),
    endIntervention: op(interventions.endIntervention),
    holdIntervention: op(interventions.holdIntervention),
    noteIntervention: op(interventions.noteIntervention),
    getIntervention: op(interventions.getIntervention),
    listInterventions: op(interventions.listInterventions),
  };
  const alertStore: AlertStore = {
    raiseAlert: op(alerts.raiseAlert),
    clearAlertMember: op(alerts.clearAlertMember),
    escalateAlert: op(alerts.escalateAlert),
    markAlertNotified: op(alerts.markAlertNotified),
    recordAlertDelivery: op(alerts.recordAlertDelivery),
    getAlert: op(alerts.getAlert),
    listAlerts: op(alerts.listAlerts),
  };

  const snapshotStore: SnapshotStore = {
    putSnapshot: op(snapshots.putSnapshot),
    appendSnapshotDelta: op(snapshots.appendSnapshotDelta),
    compactSnapshot: op(snapshots.compactSnapshot),
    getSnapshot: op(snapshots.getSnapshot),
    deleteExpiredSnapshots: op(snapshots.deleteExpiredSnapshots),
  };
  const sessionStore: SessionStore = {
    saveSession: op(sessions.saveSession),
    touchSession: op(sessions.touchSession),
    takeLoginCode: op(sessions.takeLoginCode),
    deleteSession: op(sessions.deleteSession),
    deleteExpiredSessions: op(sessions.deleteExpiredSessions),
  };

  return {
    kind: 'postgres',
    async now() {
      if (opts.clock !== 'database') return opts.clock.now();
      const [row] = await ctx.rows<{ now: number }>('selectNow', ADMIN_SQL.selectNow);
      return row!.now;
    },
    async ping() {
      await ctx.rows('ping', 'SELECT 1');
    },
    async close() {
      if (ctx.closed) return;
      ctx.closed = true;
      await listener.close();
      await eventsListener.close();
      await pool.end().catch(() => undefined);
    },
    ...tasks,
    ...agentStore,
    ...coordination,
    ...watchdogStore,
    ...effectStore,
    ...taskBlobStore,
    ...interventionStore,
    ...snapshotStore,
    ...alertStore,
    ...sessionStore,
  };
}
