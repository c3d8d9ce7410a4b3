/**
 * Agent snapshots in the SDK (docs/design.md "Snapshots"): what the previous incarnation of this agent
 * slot saved (handed over at registration), and saving this one's state — on demand (`snapshot()`,
 * `snapshotPatch()`), or when the watchdog asks with a `checkpoint` command: the request is taken at
 * the code's next safe point (`safePoint()`), where the state is whole, by calling the `snapshot`
 * provider option; the command is then acknowledged `done` (stored), `failed` (storing failed), or —
 * without a provider — `unsupported` at once.
 *
 * Incremental: after a first full snapshot, the provider's states are sent as the JSON merge patch
 * between the last stored state and the new one (`PATCH`), unless `incrementalSnapshots` is false or
 * no such patch exists (a member set to `null`); the coordinator compacts the patches.
 */
import {
  type AgentSnapshot,
  applyMergePatch,
  type CommandAck,
  type JsonObject,
  mergePatchBetween,
  type SnapshotWritten,
} from '@rouse/protocol';
import type { Client } from '../client.js';
import { InvalidOptionError, RouseApiError, RouseSdkError } from '../errors.js';

/** Gives the agent's state at a safe point (a JSON object). */
export type SnapshotProvider = () => JsonObject | Promise<JsonObject>;

export interface SnapshotOptions {
  /**
   * The agent's state, taken at the next `safePoint()` after a `checkpoint` command (the watchdog's
   * `snapshot_and_restart`) and stored as its snapshot. Without it `checkpoint` is acknowledged
   * `unsupported`.
   */
  snapshot?: SnapshotProvider;
  /** How long the coordinator keeps a snapshot after its last write. @default 86400000 (24 h, the coordinator's default) */
  snapshotTtlMs?: number;
  /** Send the provider's states as merge patches on the last stored one (see above). @default true */
  incrementalSnapshots?: boolean;
}

export interface ResolvedSnapshotOptions {
  snapshot: SnapshotProvider | undefined;
  snapshotTtlMs: number | undefined;
  incrementalSnapshots: boolean;
}

export function resolveSnapshotOptions(o: SnapshotOptions): ResolvedSnapshotOptions {
  if (o.snapshot !== undefined && typeof o.snapshot !== 'function') {
    throw new InvalidOptionError(
      'snapshot',
      'must be a function returning the state (a JSON object)',
      o.snapshot,
    );
  }
  if (o.snapshotTtlMs !== undefined && (!Number.isInteger(o.snapshotTtlMs) || o.snapshotTtlMs < 1000)) {
    throw new InvalidOptionError(
      'snapshotTtlMs',
      'must be an integer >= 1000 (milliseconds)',
      o.snapshotTtlMs,
    );
  }
  return {
    snapshot: o.snapshot,
    snapshotTtlMs: o.snapshotTtlMs,
    incrementalSnapshots: o.incrementalSnapshots ?? true,
  };
}

export interface SnapshotSaveOptions {
  /** Keep it this long after this write. @default the `snapshotTtlMs` option, else the coordinator's */
  ttlMs?: number;
}

function checkState(state: unknown, what: string): asserts state is JsonObject {
  if (state === null || typeof state !== 'object' || Array.isArray(state)) {
    throw new InvalidOptionError(what, 'must be a JSON object', state);
  }
}

/**
 * Copy a state as JSON (what the coordinator stores): later changes to the caller's object do not leak
 * in. A state JSON cannot carry (a cycle, a BigInt) is an {@link InvalidOptionError} naming `what`.
 */
function asJson(state: JsonObject, what: string): JsonObject {
  let text: string;
  try {
    text = JSON.stringify(state);
  } catch (err) {
    throw new InvalidOptionError(what, `must be JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  return JSON.parse(text) as JsonObject;
}

export class AgentSnapshots {
  /** The snapshot handed over at registration (the previous incarnation's), or null. */
  restored: AgentSnapshot | null = null;
  /** The state as last stored by this process (or restored): what a patch applies to. */
  private stored: JsonObject | null = null;
  /** Ids of the `checkpoint` commands waiting for a safe point. */
  private requested: string[] = [];
  /** The longest TTL the waiting commands asked for, if any. */
  private requestedTtlMs: number | undefined;
  private taking: Promise<void> | undefined;

  constructor(
    private readonly o: ResolvedSnapshotOptions,
    private readonly deps: {
      /** The client acting as this agent, and its id (throws before registration). */
      agent(): { client: Client; agentId: string };
      /** Queue the acknowledgement of a command for the next heartbeat, and send it soon. */
      answer(ack: CommandAck): void;
    },
  ) {}

  /** Registration answered: remember what it handed over (and patch on it from now on). */
  registered(snapshot: AgentSnapshot | null | undefined): void {
    this.restored = snapshot ?? null;
    this.stored = snapshot ? asJson(snapshot.state, 'the restored snapshot') : null;
  }

  /** The restored state (a copy), or null. */
  restore<T extends JsonObject = JsonObject>(): T | null {
    return this.restored === null ? null : (asJson(this.restored.state, 'the restored snapshot') as T);
  }

  /** Store `state` as the full snapshot (`PUT`). */
  async snapshot(state: JsonObject, options: SnapshotSaveOptions = {}): Promise<SnapshotWritten> {
    checkState(state, 'snapshot(state)');
    const copy = asJson(state, 'snapshot(state)');
    const { client, agentId } = this.deps.agent();
    const written = await client.putSnapshot(agentId, copy, this.ttl(options));
    this.stored = copy;
    return written;
  }

  /** Apply a JSON merge patch to the stored snapshot (`PATCH`); `404 not_found` when there is none. */
  async snapshotPatch(patch: JsonObject, options: SnapshotSaveOptions = {}): Promise<SnapshotWritten> {
    checkState(patch, 'snapshotPatch(patch)');
    const copy = asJson(patch, 'snapshotPatch(patch)');
    const { client, agentId } = this.deps.agent();
    const written = await client.patchSnapshot(agentId, copy, this.ttl(options));
    this.stored = this.stored === null ? null : (applyMergePatch(this.stored, copy) as JsonObject);
    return written;
  }

  /**
   * Store `state` the cheapest way: the patch from the last stored state when there is one (falling
   * back to a full snapshot when the coordinator has none any more), else in full.
   */
  async save(state: JsonObject, options: SnapshotSaveOptions = {}): Promise<SnapshotWritten> {
    checkState(state, 'state');
    const patch =
      this.o.incrementalSnapshots && this.stored !== null
        ? mergePatchBetween(this.stored, asJson(state, 'snapshot(state)'))
        : null;
    if (patch === null) return this.snapshot(state, options);
    try {
      return await this.snapshotPatch(patch, options);
    } catch (err) {
      // expired, or never stored there: send it whole
      if (err instanceof RouseApiError && err.status === 404) return this.snapshot(state, options);
      throw err;
    }
  }

  /**
   * A `checkpoint` command arrived: with a provider it waits for the next safe point (true); without
   * one it is answered `unsupported` now (false). `ttlMs`: the TTL the command asks for.
   */
  checkpointRequested(commandId: string | undefined, ttlMs?: number): boolean {
    if (this.o.snapshot === undefined) {
      if (commandId !== undefined) {
        this.deps.answer({
          commandId,
          outcome: 'unsupported',
          message: 'this agent has no snapshot provider (the `snapshot` option)',
        });
      }
      return false;
    }
    this.requested.push(commandId ?? '');
    if (ttlMs !== undefined) this.requestedTtlMs = Math.max(ttlMs, this.requestedTtlMs ?? 0);
    return true;
  }

  /** True while a `checkpoint` waits for a safe point. */
  get pending(): boolean {
    return this.requested.length > 0;
  }

  /**
   * A safe point: take the requested snapshot (one for every waiting `checkpoint`) and answer them.
   * Never rejects; resolves once the snapshot is stored or failed.
   */
  async atSafePoint(): Promise<void> {
    if (this.taking !== undefined) return this.taking;
    if (this.requested.length === 0 || this.o.snapshot === undefined) return;
    const provider = this.o.snapshot;
    const ids = this.requested.splice(0);
    const ttlMs = this.requestedTtlMs;
    this.requestedTtlMs = undefined;
    this.taking = (async () => {
      let outcome: CommandAck['outcome'] = 'done';
      let message: string | undefined;
      try {
        const state = await provider();
        checkState(state, 'the snapshot provider’s state');
        const written = await this.save(state, ttlMs === undefined ? {} : { ttlMs });
        message = `snapshot version ${written.version} stored`;
      } catch (err) {
        outcome = 'failed';
        message = `the snapshot was not stored: ${err instanceof Error ? err.message : String(err)}`.slice(
          0,
          1024,
        );
      }
      for (const commandId of ids) {
        if (commandId !== '') this.deps.answer({ commandId, outcome, ...(message ? { message } : {}) });
      }
    })().finally(() => {
      this.taking = undefined;
    });
    return this.taking;
  }

  private ttl(options: SnapshotSaveOptions): { ttlMs?: number } {
    const ttlMs = options.ttlMs ?? this.o.snapshotTtlMs;
    return ttlMs === undefined ? {} : { ttlMs };
  }
}

/** The error for a snapshot call before registration. */
export function notRegistered(what: string): RouseSdkError {
  return new RouseSdkError(`the ${what} is not registered; call start() first`, { code: 'invalid_state' });
}
