/**
 * What several coordinators sharing a store exchange through it (DESIGN.md §6 "Leases for
 * coordinators", §8): lease shards, presence, the notices that wake claims and feed the live event
 * streams, and dependency states. Part of the Store contract (`store.ts` re-exports every type).
 */
import type { DependencyState } from '@rouse/protocol';

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
}

/**
 * What a coordinator did that the live event streams of the other coordinators show, named only (they
 * read the rest back from the store): a history entry (a task's creation is entry 1), a progress
 * change, an agent's registration or status change.
 */
export type StreamRef =
  | { kind: 'transition'; taskId: string; seq: number }
  | { kind: 'progress'; taskId: string }
  | { kind: 'agent'; agentId: string; event: 'registered' | 'status' };

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

/** A dependency's last reported state, as every coordinator shares it (DESIGN.md §6). */
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
