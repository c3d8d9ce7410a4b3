/**
 * The coordination part of the Store contract: what several coordinators sharing a store exchange
 * through it (docs/design.md §8) — lease shards, presence, and the notices that wake claims and feed the
 * live event streams. Part of `Store` (`store.ts`, which re-exports every type); with SQLite one
 * coordinator holds every shard and notices stay in the process.
 */
import type { DependencyState, Task, TaskEvent } from '@rouse/protocol';

/** A coordinator's hold on one lease shard (several coordinators split lease expiry by shard). */
export interface ShardLease {
  shard: number;
  ownerId: string;
  /** Grows every time the shard changes hands; actions of an older epoch are void. */
  epoch: number;
  /** Store clock. */
  expiresAt: number;
}

/** A coordinator that announced itself live (several coordinators share the lease shards among these). */
export interface CoordinatorPresence {
  id: string;
  /** Store clock: its last announcement. */
  lastSeenAt: number;
  /** Store clock: it counts as live until then (last announcement + its shard lease TTL). */
  expiresAt: number;
  /** It has clients on its live event stream: the others relay their transitions to it. */
  listening: boolean;
  /** Fingerprints of the tokens it accepts (see `AnnounceCoordinatorInput.tokens`), or null. */
  tokens: string | null;
}

export interface AnnounceCoordinatorInput {
  ownerId: string;
  ttlMs: number;
  /**
   * This process's own random token. A live presence under `ownerId` that another instance wrote is
   * then not taken over: the announcement fails with `conflict` (details: `expiresAt`, when that
   * presence lapses unless renewed). Without it, the presence is simply written.
   */
  instance?: string;
  /** It has clients on its live event stream (see `CoordinatorPresence.listening`). @default false */
  listening?: boolean;
  /**
   * Short fingerprints of the tokens it accepts (`admin:…,enrollment:…,readonly:…`): coordinators of
   * one store must accept the same ones, and one that does not is said (shard-manager.ts).
   */
  tokens?: string;
}

/**
 * What a coordinator did that the live event streams of the other coordinators show, named only (they
 * read the rest back from the store): a history entry (a task's creation is entry 1), a progress
 * change, an agent's registration or status change, a condition opened or closed (by its seq).
 */
export type StreamRef =
  | { kind: 'transition'; taskId: string; seq: number }
  | { kind: 'progress'; taskId: string }
  | { kind: 'agent'; agentId: string; event: 'registered' | 'status' }
  | { kind: 'condition'; seq: number }
  | { kind: 'intervention'; id: string }
  | { kind: 'alert'; id: string };

export interface StreamNotice {
  origin: string;
  refs: StreamRef[];
}

/** A task's history entry. */
export interface TransitionRef {
  taskId: string;
  seq: number;
}

/** Work became claimable (created, requeued, backoff elapsed, runAt reached) for these types. */
export interface ClaimableNotice {
  types: string[];
  /**
   * The publishing coordinator, so it can tell its own notices from others' (it has already woken
   * its own waiters). Stores carry it through unchanged; notices a store publishes itself omit it.
   */
  origin?: string;
}

/** A dependency's last reported state, as every coordinator shares it (docs/design.md §6). */
export interface DependencyRecord {
  name: string;
  state: DependencyState;
  /** For a state other than `up`: when it stops blocking (epoch ms), or null (until reported again). */
  until: number | null;
  /** When the current state began (epoch ms). */
  since: number;
  /** `agent:<id>`, `admin` or `probe`. */
  reportedBy: string | null;
  message: string | null;
  /** Grows with every save of this dependency: a copy keeps the newest it has seen. */
  version: number;
}

export interface CoordinationStore {
  /**
   * Take or renew shard leases for `ownerId`: renews the unexpired ones it holds, then takes free or
   * expired ones (never-held, released or lapsed — its own lapsed ones too), lowest shard first, until
   * it holds `want` below `shardCount`; all by the store clock, each until now + `ttlMs`. Renewing
   * never goes past `want` by dropping shards: holding more is the caller's to fix
   * (`releaseShardLeases` with a list). Returns every shard it holds after the call, in shard order.
   * A shard taken gets `epoch + 1` (a new shard starts at 1); a renewed one keeps its epoch. The take
   * is conditional on the row still being expired, so a shard never has two live owners.
   */
  acquireShardLeases(input: {
    ownerId: string;
    shardCount: number;
    want: number;
    ttlMs: number;
  }): Promise<ShardLease[]>;
  /**
   * Give up shards `ownerId` holds: they expire now, so any coordinator takes them at its next
   * `acquireShardLeases`. With `shards`, only those (balancing: a coordinator above its share hands
   * the excess to a newcomer; shards it does not hold are left alone) and its presence stays. Without,
   * every shard it holds and its presence too (graceful stop), so the others' shares grow at once.
   */
  releaseShardLeases(ownerId: string, shards?: readonly number[]): Promise<void>;
  /** All shard leases, in shard order (for status pages and tests). */
  listShardLeases(): Promise<ShardLease[]>;
  /**
   * Record `ownerId` as a live coordinator until now + `ttlMs` (store clock; call it with each shard
   * renewal, with the shard TTL, so presence and shards lapse together) and return every live one —
   * presence not expired, the caller included — ordered by id: they share the shards. Presences that
   * expired are forgotten. With `instance`, a live presence under `ownerId` written by another
   * instance is left alone and the call fails with `conflict` (see `AnnounceCoordinatorInput`).
   */
  announceCoordinator(input: AnnounceCoordinatorInput): Promise<CoordinatorPresence[]>;
  /** The live coordinators (presence not expired), ordered by id. Reads only. */
  listCoordinators(): Promise<CoordinatorPresence[]>;
  /**
   * Publish a notice to every coordinator sharing this store (PostgreSQL `NOTIFY`); SQLite delivers
   * it to local subscribers only. Stores may also publish on their own after writes that make work
   * claimable.
   */
  publishClaimable(notice: ClaimableNotice): Promise<void>;
  /** Listen for notices from any coordinator; returns the unsubscribe function. */
  onClaimable(listener: (notice: ClaimableNotice) => void): () => void;
  /**
   * Publish a stream notice to every coordinator sharing this store (PostgreSQL `NOTIFY` on a channel
   * of its own, split into several when long); SQLite delivers it to local subscribers only.
   */
  publishStreamNotice(notice: StreamNotice): Promise<void>;
  /** Listen for stream notices from any coordinator; returns the unsubscribe function. */
  onStreamNotices(listener: (notice: StreamNotice) => void): () => void;
  /** The tasks and history entries `refs` name, in their order; ones that do not exist are left out. */
  readTransitions(refs: TransitionRef[]): Promise<{ task: Task; event: TaskEvent }[]>;
}
