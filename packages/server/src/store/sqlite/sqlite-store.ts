/**
 * The embedded SQLite backend of the Store contract (better-sqlite3), composed of its parts (tasks,
 * agents, coordination, watchdog, interventions, effect keys, task blobs, agent snapshots, alerts). One
 * connection for all reads and writes, statements prepared once, every write in one `BEGIN IMMEDIATE`
 * transaction (so several processes sharing a file serialise their writes instead of failing to
 * upgrade a read lock); a second connection, on a thread of its own, only checkpoints the WAL
 * (wal-checkpointer.ts). Results are wrapped in resolved promises: the contract is async for
 * PostgreSQL.
 *
 * Time is the injected `Clock`'s (docs/design.md §3: the coordinator's clock decides on SQLite).
 */
import Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { RouseError, UnavailableError, ValidationError } from '../../core/errors.js';
import type {
  AgentStore,
  AlertStore,
  ClaimableNotice,
  CoordinationStore,
  EffectStore,
  InterventionStore,
  SessionStore,
  SnapshotStore,
  Store,
  StreamNotice,
  TaskBlobStore,
  TaskStore,
  WatchdogStore,
} from '../store.js';
import { migrateSqlite } from './migrate.js';
import * as agents from './sqlite-agents.js';
import * as alerts from './sqlite-alerts.js';
import { SqliteContext } from './sqlite-context.js';
import * as effects from './sqlite-effects.js';
import * as interventions from './sqlite-interventions.js';
import * as sessions from './sqlite-sessions.js';
import * as shards from './sqlite-shards.js';
import * as snapshots from './sqlite-snapshots.js';
import * as admin from './sqlite-task-admin.js';
import * as taskBlobs from './sqlite-task-blobs.js';
import * as reads from './sqlite-task-reads.js';
import * as writes from './sqlite-task-writes.js';
import * as watchdog from './sqlite-watchdog.js';
import { WalCheckpointer } from './wal-checkpointer.js';

export interface SqliteStoreOptions {
  /** A database file path, or `':memory:'` for a private in-memory database. */
  path: string;
  clock: Clock;
  /** How long a write waits for another process's lock before failing with `unavailable`. @default 5000 */
  busyTimeoutMs?: number;
  /**
   * SQLite page cache per connection, in KiB (>= 256). SQLite's own default: better-sqlite3 raises it
   * to 16 MB, but a commit that split a b-tree page (nearly every write here) scans the whole page
   * cache's hash (balance_nonroot re-keys pages through the pending-byte page, so the commit's cache
   * truncate cannot take its short path), so a bigger cache makes every commit slower while the hot
   * path's pages (queue head, recent rows, history tail) fit in far less. @default 2000
   */
  cacheSizeKiB?: number;
  /**
   * Where WAL checkpoints run: `'thread'`, on a worker thread with its own connection (see
   * wal-checkpointer.ts), or `'commit'`, inside the commit that crosses the threshold, as SQLite does
   * by default. An in-memory database has no WAL and ignores it. @default 'thread'
   */
  checkpoints?: 'thread' | 'commit';
  /** Something went wrong off the request path (the checkpoint thread stopped); the store goes on. */
  onBackgroundError?: (err: Error, what: string) => void;
}

export interface ResolvedSqliteStoreOptions {
  path: string;
  clock: Clock;
  busyTimeoutMs: number;
  cacheSizeKiB: number;
  checkpoints: 'thread' | 'commit';
  onBackgroundError: (err: Error, what: string) => void;
}

export function resolveSqliteStoreOptions(options: SqliteStoreOptions): ResolvedSqliteStoreOptions {
  if (typeof options.path !== 'string' || options.path.length === 0) {
    throw new ValidationError('path', "must be a file path or ':memory:'");
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ValidationError('busyTimeoutMs', 'must be an integer >= 0 (milliseconds)');
  }
  const cacheSizeKiB = options.cacheSizeKiB ?? 2000;
  if (!Number.isInteger(cacheSizeKiB) || cacheSizeKiB < 256) {
    throw new ValidationError('cacheSizeKiB', 'must be an integer >= 256 (KiB)');
  }
  const checkpoints = options.checkpoints ?? 'thread';
  if (checkpoints !== 'thread' && checkpoints !== 'commit') {
    throw new ValidationError('checkpoints', "must be 'thread' or 'commit'");
  }
  const onBackgroundError = options.onBackgroundError ?? (() => {});
  return {
    path: options.path,
    clock: options.clock,
    busyTimeoutMs,
    cacheSizeKiB,
    checkpoints,
    onBackgroundError,
  };
}

const UNAVAILABLE_CODES = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_FULL'];

/** WAL pages past which a commit checkpoints (SQLite's default is 1000); the checkpoint thread's threshold too. */
export const WAL_AUTOCHECKPOINT_PAGES = 250;

/**
 * With the checkpoint thread, the commit's own threshold: reached only when the thread falls behind,
 * or when commits never leave it a moment with the whole WAL copied (SQLite starts the WAL over only
 * then), about every 4,000 pages under a steady stream of commits.
 */
export const WAL_BACKSTOP_PAGES = 4000;

/** How long the checkpoint thread lets commits gather once woken. */
const CHECKPOINT_GATHER_MS = 20;

/**
 * Open (creating if needed) and migrate the database. Throws `unavailable` when the file cannot be
 * opened or its schema is newer than this build.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const opts = resolveSqliteStoreOptions(options);
  let db: Database.Database;
  try {
    db = new Database(opts.path, { timeout: opts.busyTimeoutMs });
  } catch (err) {
    throw new UnavailableError(`cannot open the SQLite database ${opts.path}: ${(err as Error).message}`, {
      path: opts.path,
    });
  }
  let ctx: SqliteContext;
  try {
    if (opts.path !== ':memory:') db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`cache_size = -${opts.cacheSizeKiB}`);
    // A checkpoint runs inside the commit that crosses this many WAL pages: it copies them into the
    // file and fsyncs both while the event loop waits. Small and often keeps each stall short: at
    // 1,500 agent heartbeats/s, 250 pages gave p99 / p99.9 / max call latency of 5.5 / 7 / 11 ms
    // against SQLite's default 1000 pages' 12 / 15 / 18 ms, for the same CPU.
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    migrateSqlite(db, opts.clock);
    ctx = new SqliteContext(db, opts.clock);
  } catch (err) {
    db.close();
    throw err;
  }
  const checkpointer = opts.checkpoints === 'thread' && !db.memory ? startCheckpointer(db, opts) : undefined;

  const storeError = (err: unknown): unknown => {
    if (err instanceof RouseError) return err;
    if (err instanceof Database.SqliteError) {
      if (err.code.startsWith('SQLITE_CONSTRAINT')) {
        return new RouseError('conflict', `the write conflicts with existing data: ${err.message}`, {
          sqliteCode: err.code,
        });
      }
      if (UNAVAILABLE_CODES.some((c) => err.code.startsWith(c))) {
        return new UnavailableError(`the SQLite database is unavailable (${err.code}); retry shortly`, {
          sqliteCode: err.code,
        });
      }
    }
    if (!db.open) return new UnavailableError('the store is closed');
    return err;
  };
  const call = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(storeError(err));
    }
  };
  /** Run `fn` as one write transaction. */
  const write = <A extends unknown[], R>(fn: (ctx: SqliteContext, ...args: A) => R) => {
    const tx = db.transaction((...args: A) => fn(ctx, ...args));
    if (checkpointer === undefined) return (...args: A): Promise<R> => call(() => tx.immediate(...args));
    return (...args: A): Promise<R> =>
      call(() => {
        const result = tx.immediate(...args);
        checkpointer.committed();
        return result;
      });
  };
  /** Run `fn` as one read transaction (a consistent snapshot across its statements). */
  const read = <A extends unknown[], R>(fn: (ctx: SqliteContext, ...args: A) => R) => {
    const tx = db.transaction((...args: A) => fn(ctx, ...args));
    return (...args: A): Promise<R> => call(() => tx.deferred(...args));
  };
  /** Run `fn`, one statement, as is: atomic on its own, it needs no transaction around it. */
  const single = <A extends unknown[], R>(fn: (ctx: SqliteContext, ...args: A) => R) => {
    return (...args: A): Promise<R> => call(() => fn(ctx, ...args));
  };
  const tasks: TaskStore = {
    createTasks: write(admin.createTasks),
    getTask: (id) => call(() => ctx.task(id)),
    listTasks: read(reads.listTasks),
    listTaskEvents: read(reads.listTaskEvents),
    taskSummary: read(reads.taskSummary),
    claimTasks: write(writes.claimTasks),
    startTask: write(writes.startTask),
    recordHeartbeats: write(writes.recordHeartbeats),
    saveCheckpoint: write(writes.saveCheckpoint),
    appendLogs: write(writes.appendLogs),
    readLogs: read(reads.readLogs),
    setResultRef: write(writes.setResultRef),
    completeTasks: write(writes.completeTasks),
    completeAndClaim: write(writes.completeAndClaim),
    completeAndClaimMany: write(writes.completeAndClaimMany),
    failTask: write(writes.failTask),
    expireLease: write(admin.expireLease),
    completeFromResultRef: write(admin.completeFromResultRef),
    cancelTask: write(admin.cancelTask),
    retryTask: write(admin.retryTask),
    releaseAgentTasks: write(admin.releaseAgentTasks),
    activeLeases: read(reads.activeLeases),
    nextClaimableAt: read(reads.nextClaimableAt),
    queueStats: read(reads.queueStats),
  };
  const agentStore: AgentStore = {
    registerAgent: write(agents.registerAgent),
    getAgent: read(agents.getAgent),
    resolveAgentToken: single(agents.resolveAgentToken),
    listAgents: read(agents.listAgents),
    recordAgentHeartbeats: write(agents.recordAgentHeartbeats),
    recordPoll: write(agents.recordPoll),
    endAgent: write(agents.endAgent),
    queueAgentCommand: write(agents.queueAgentCommand),
    clearAgentCommands: write(agents.clearAgentCommands),
    takeAgentCommands: write(agents.takeAgentCommands),
  };
  // One file, one coordinator: notices go to this process's subscribers only.
  const claimable = localNotices<ClaimableNotice>();
  const streamNotices = localNotices<StreamNotice>();
  const coordination: CoordinationStore = {
    acquireShardLeases: write(shards.acquireShardLeases),
    releaseShardLeases: write(shards.releaseShardLeases),
    listShardLeases: read(shards.listShardLeases),
    announceCoordinator: write(shards.announceCoordinator),
    listCoordinators: read(shards.listCoordinators),
    publishClaimable: (notice) => claimable.publish(notice),
    onClaimable: (listener) => claimable.subscribe(listener),
    publishStreamNotice: (notice) => streamNotices.publish(notice),
    onStreamNotices: (listener) => streamNotices.subscribe(listener),
    readTransitions: read(reads.readTransitions),
  };
  const watchdogStore: WatchdogStore = {
    applyConditionChanges: write(watchdog.applyConditionChanges),
    listConditions: read(watchdog.listConditions),
    readConditions: read(watchdog.readConditions),
    getAgentWatches: read(watchdog.getAgentWatches),
    dueAgentLeases: read(watchdog.dueAgentLeases),
    markAgentsLost: write(watchdog.markAgentsLost),
    saveBaselines: write(watchdog.saveBaselines),
    listBaselines: read(watchdog.listBaselines),
    agentStatusCounts: read(watchdog.agentStatusCounts),
    saveDependency: write(watchdog.saveDependency),
    listDependencies: read(watchdog.listDependencies),
  };
  const effectStore: EffectStore = {
    claimEffect: write(effects.claimEffect),
    recordEffect: write(effects.recordEffect),
    releaseEffect: write(effects.releaseEffect),
    deleteExpiredEffects: write(effects.deleteExpiredEffects),
  };
  const taskBlobStore: TaskBlobStore = {
    recordTaskBlob: write(taskBlobs.recordTaskBlob),
    getTaskBlob: read(taskBlobs.getTaskBlob),
    isTaskBlobKey: read(taskBlobs.isTaskBlobKey),
  };
  const interventionStore: InterventionStore = {
    openIntervention: write(interventions.openIntervention),
    endIntervention: write(interventions.endIntervention),
    holdIntervention: write(interventions.holdIntervention),
    noteIntervention: write(interventions.noteIntervention),
    getIntervention: read(interventions.getIntervention),
    listInterventions: read(interventions.listInterventions),
  };
  const snapshotStore: SnapshotStore = {
    putSnapshot: write(snapshots.putSnapshot),
    appendSnapshotDelta: write(snapshots.appendSnapshotDelta),
    compactSnapshot: write(snapshots.compactSnapshot),
    getSnapshot: read(snapshots.getSnapshot),
    deleteExpiredSnapshots: write(snapshots.deleteExpiredSnapshots),
  };
  const alertStore: AlertStore = {
    raiseAlert: write(alerts.raiseAlert),
    clearAlertMember: write(alerts.clearAlertMember),
    escalateAlert: write(alerts.escalateAlert),
    markAlertNotified: write(alerts.markAlertNotified),
    recordAlertDelivery: write(alerts.recordAlertDelivery),
    getAlert: read(alerts.getAlert),
    listAlerts: read(alerts.listAlerts),
  };
  const sessionStore: SessionStore = {
    saveSession: write(sessions.saveSession),
    touchSession: write(sessions.touchSession),
    takeLoginCode: write(sessions.takeLoginCode),
    deleteSession: write(sessions.deleteSession),
    deleteExpiredSessions: write(sessions.deleteExpiredSessions),
  };
  const ping = db.prepare('SELECT 1');
  return {
    kind: 'sqlite',
    now: () => Promise.resolve(opts.clock.now()),
    ping: () => call(() => void ping.get()),
    close: async () => {
      await checkpointer?.stop();
      return call(() => {
        if (db.open) db.close();
      });
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

/**
 * Hand checkpoints to a thread: the commit's own threshold becomes the backstop, and comes back if the
 * thread stops.
 */
function startCheckpointer(db: Database.Database, opts: ResolvedSqliteStoreOptions): WalCheckpointer {
  db.pragma(`wal_autocheckpoint = ${WAL_BACKSTOP_PAGES}`);
  return new WalCheckpointer({
    path: opts.path,
    thresholdFrames: WAL_AUTOCHECKPOINT_PAGES,
    gatherMs: CHECKPOINT_GATHER_MS,
    onFailure: (err) => {
      if (db.open) db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      opts.onBackgroundError(err, 'the WAL checkpoint thread stopped; commits checkpoint again');
    },
  });
}

/**
 * Notices to this process's subscribers: each gets its own copy, after the publisher's turn (as a
 * database notification would arrive), and one subscriber's failure does not stop the others.
 */
function localNotices<N>(): {
  publish(notice: N): Promise<void>;
  subscribe(listener: (notice: N) => void): () => void;
} {
  const listeners = new Set<(notice: N) => void>();
  return {
    publish(notice) {
      const sent = structuredClone(notice); // as published, whatever the publisher does next
      queueMicrotask(() => {
        for (const listener of [...listeners]) {
          try {
            listener(structuredClone(sent));
          } catch {
            // a listener's failure is its own; the others still hear the notice
          }
        }
      });
      return Promise.resolve();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
