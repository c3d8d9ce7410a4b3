/**
 * Claims (docs/protocol.md `POST /v1/agents/{agentId}/claim`): complete-and-claim-next in one request,
 * N tasks per atomic store claim, and long-polling until work appears, the wait ends, or the client
 * goes away. Tasks that require an unavailable dependency are skipped by the store.
 *
 * If the store becomes unreachable during a long-poll (after a first look, or after completing what
 * the request carried), the claim answers with what it has instead of an error; the next request
 * meets the outage as `503 unavailable`.
 */
import type { ClaimRequest, ClaimResponse, Task } from '@rouse/protocol';
import type { ClaimInput, Transitioned } from '../store/store.js';
import { requireActsAs } from './auth.js';
import type { Caller } from './coordinator.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { completeMany } from './holder-writes.js';

export interface ClaimService {
  claim(caller: Caller, agentId: string, req: ClaimRequest, signal?: AbortSignal): Promise<ClaimResponse>;
  /** The agent left: forget it, and refuse a claim of its still between two awaits. */
  forgetAgent(agentId: string): void;
  /** Forget what is kept of the agent (it was lost or replaced; it may claim again). */
  pruneAgent(agentId: string): void;
  /** Agents whose last poll is remembered here. */
  readonly remembered: number;
}

/**
 * How soon a claim looks again when the store names a due time this coordinator's clock has already
 * passed; doubled on each such look, up to the maximum.
 */
const RECHECK_MIN_MS = 5;
const RECHECK_MAX_MS = 1000;
/**
 * How far before its look a claim asks the store for tasks due: more than this coordinator's
 * estimate of the store's clock can be off (about a millisecond), less than a task blocked by an
 * unavailable dependency should cost in looks (each such task is looked for again at most a few
 * times, while its due moment is within this).
 */
const LOOK_BACK_MS = 1000;

export function createClaimService(ctx: CoordinatorContext): ClaimService {
  const { store, clock, waiters } = ctx;
  /**
   * Last recorded poll per agent: writes are throttled to one per `pollRecordIntervalMs`. An agent is
   * forgotten when it leaves, is lost or is replaced, so this holds the live agents only.
   */
  const polls = new Map<string, { at: number; types: string }>();
  /**
   * Agents that left, with when: a claim of theirs caught between two awaits when they left must not
   * claim afterwards. Kept for longer than any long-poll can last, then forgotten.
   */
  const left = new Map<string, number>();
  const LEFT_MEMORY_MS = 120_000;

  async function recordPoll(agentId: string, types: string[]): Promise<void> {
    const now = clock.now();
    const key = types.join(',');
    const last = polls.get(agentId);
    if (last !== undefined && last.types === key && now - last.at < ctx.options.pollRecordIntervalMs) return;
    polls.set(agentId, { at: now, types: key });
    await store.recordPoll({ agentId, types });
  }

  return {
    async claim(caller, agentId, req, signal) {
      requireActsAs(caller, agentId, 'claim');
      const deadline = clock.now() + (req.waitMs ?? 0);
      let recheckMs = RECHECK_MIN_MS;
      await recordPoll(agentId, req.types);
      const response: ClaimResponse = { tasks: [] };
      const max = req.max ?? 1;
      const claimInput = (): ClaimInput => ({
        agentId,
        types: req.types,
        max,
        start: req.start === true,
        unavailableDependencies: ctx.dependencies.unavailable(),
        backoff: ctx.options.backoff,
      });
      /** When the last look at the store began, by this coordinator's clock. */
      let lookedAt = clock.now();
      /** The first look, made in the completions' store transaction when the store can. */
      let first: { epoch: number; claimed: Transitioned[] } | undefined;
      if (req.complete !== undefined && req.complete.length > 0) {
        const epoch = waiters.epochOf(req.types);
        const done = await completeMany(
          ctx,
          agentId,
          req.complete,
          signal?.aborted ? undefined : claimInput(),
        );
        response.completed = done.completed;
        if (done.claimed !== undefined) first = { epoch, claimed: done.claimed };
      }
      let looked = response.completed !== undefined;
      try {
        return await loop();
      } catch (err) {
        if (looked && (err as { code?: unknown }).code === 'unavailable') return response;
        throw err;
      }

      async function loop(): Promise<ClaimResponse> {
        for (;;) {
          let epoch: number;
          let claimed: Transitioned[];
          if (first !== undefined) {
            ({ epoch, claimed } = first);
            first = undefined;
          } else {
            if (signal?.aborted || left.has(agentId)) return response;
            epoch = waiters.epochOf(req.types);
            lookedAt = clock.now();
            claimed = await store.claimTasks(claimInput());
          }
          if (claimed.length > 0) {
            response.tasks = claimed.map((t): Task => {
              ctx.applyTransition(t);
              return t.task;
            });
            return response;
          }
          looked = true;
          const now = clock.now();
          if (now >= deadline) return response;
          if (waiters.epochOf(req.types) !== epoch) continue; // work may have appeared while we looked
          // From a moment before the look: a task that became due after the store's look and before
          // this read is found too, and looked for again below.
          const next = await store.nextClaimableAt(req.types, lookedAt - LOOK_BACK_MS);
          if (waiters.epochOf(req.types) !== epoch) continue;
          let until = deadline;
          if (next !== null && next > now) until = Math.min(deadline, next);
          else if (next !== null) {
            // A task due at `next`, which this clock has passed, and the look did not find it: the
            // store's clock was a moment behind this estimate of it (never exact), the task became
            // due between the look and this read, or it needs a dependency that is down. Look again
            // shortly, backing off, not at the deadline.
            until = Math.min(deadline, now + recheckMs);
            recheckMs = Math.min(recheckMs * 2, RECHECK_MAX_MS);
          }
          if (until <= clock.now()) continue;
          const result = await waiters.wait({ agentId, types: req.types, max, until, signal });
          // Woken or timed out: look again (at the deadline too, for work that appeared right then).
          if (result === 'aborted' || result === 'stopped') return response;
        }
      }
    },
    pruneAgent(agentId) {
      polls.delete(agentId);
    },
    get remembered() {
      return polls.size;
    },
    forgetAgent(agentId) {
      polls.delete(agentId);
      const now = clock.now();
      for (const [id, at] of left) if (now - at > LEFT_MEMORY_MS) left.delete(id);
      left.set(agentId, now);
    },
  };
}
