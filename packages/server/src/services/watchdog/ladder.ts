/**
 * The recovery ladder at work (docs/design.md §6.4): for every agent with an open condition in the
 * lease shards this coordinator holds, start the next rung its policy allows, carry it out (commands,
 * a reassignment, an alert), judge it by the rung's success criterion, and move on when it fails —
 * every step an intervention in the store, so another coordinator taking the shard over goes on from
 * where this one stopped, and opening one is a conditional write (never two at once for a condition).
 *
 * It runs when this coordinator opens or closes a condition, when an agent acknowledges a command,
 * and on a sweep (`ladderSweepMs`) that finds everything else: conditions opened elsewhere,
 * timeouts, the end of a `for` or of an outage. The rules are pure, in `core/watchdog/ladder.ts`.
 */
import type { Agent, JsonObject } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { RecoveryAction, ResolvedPolicy } from '../../core/policies/resolved-policy.js';
import {
  type AttemptFacts,
  attemptsFrom,
  type Episode,
  episodeKey,
  judgeAttempt,
  nextStep,
} from '../../core/watchdog/ladder.js';
import { shardOf } from '../../store/lease-shards.js';
import type { Store, Transitioned } from '../../store/store.js';
import type { AgentCommands } from '../agent-commands.js';
import { newId } from '../ids.js';
import { BACKGROUND_STORE_CALLS, forEachLimited } from '../limited.js';
import { every } from '../periodic.js';
import type { ShardSet } from '../shard-manager.js';
import type { Interventions } from './interventions.js';
import { createLadderActions } from './ladder-actions.js';
import type { LadderAlerts } from './ladder-alerts.js';
import { createLadderSteps } from './ladder-steps.js';

export interface LadderDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  commands: AgentCommands;
  interventions: Interventions;
  alerts: LadderAlerts;
  policyFor: (agentType: string) => ResolvedPolicy;
  shards: () => ShardSet;
  /** This coordinator's epoch of a lease shard it holds (null: not held). */
  shardEpoch: (shard: number) => number | null;
  coordinatorId: string;
  /** Apply a transition the ladder made (a reassigned task goes back to the queue). */
  applyTransition: (t: Transitioned) => void;
  /** A `terminate` succeeded: the agent is `terminated` (its tasks requeued, its conditions closed). */
  terminated: (agentId: string, reason: string) => Promise<void>;
  sweepMs: number;
}

export interface Ladder {
  start(): void;
  stop(): void;
  /** Something changed for the agent: run its ladder soon (if its shard is held here). */
  poke(agentId: string): void;
  /** Run every ladder this coordinator owns now (the periodic sweep). */
  sweep(): Promise<void>;
  /** Resolves when no ladder step is in flight. */
  idle(): Promise<void>;
  /** Ladder steps run here, and the time spent in them (seconds). */
  readonly stats: { steps: number; seconds: number };
}

/** Interventions read per agent to count budgets (newest first). */
const HISTORY_LIMIT = 500;

export function createLadder(deps: LadderDeps): Ladder {
  const { store, clock, logger } = deps;
  const actor = `coordinator:${deps.coordinatorId}`;
  /** Per agent: the step in flight, and whether another was asked for meanwhile. */
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  /** Exhausted episodes already reported: agent → episode key → its `since`; pruned with the episode. */
  const leftForAPerson = new Map<string, Map<string, number>>();
  const stats = { steps: 0, seconds: 0 };
  let started = false;
  const steps = createLadderSteps(deps);
  const { hold, end } = steps;
  const { act, sendRestart, reassignedTasks } = createLadderActions({ ...deps, steps, actor });

  const owns = (agentId: string): boolean => {
    const held = deps.shards();
    return held.ids.includes(shardOf(agentId, held.count));
  };

  function run(agentId: string): Promise<void> {
    const current = running.get(agentId);
    if (current !== undefined) {
      again.add(agentId);
      return current;
    }
    const p = (async () => {
      do {
        again.delete(agentId);
        const t0 = performance.now();
        try {
          await step(agentId);
        } catch (err) {
          const down = (err as { code?: unknown }).code === 'unavailable';
          logger[down ? 'debug' : 'warn']({ err, agentId }, 'recovery ladder step failed');
        }
        stats.steps++;
        stats.seconds += (performance.now() - t0) / 1000;
      } while (again.has(agentId));
    })().finally(() => running.delete(agentId));
    running.set(agentId, p);
    return p;
  }

  async function step(agentId: string): Promise<void> {
    if (!owns(agentId)) return;
    // Both reads at once: in a burst of stalls every round trip of a step delays its action.
    const [agent, { interventions: history }] = await Promise.all([
      store.getAgent(agentId),
      store.listInterventions({ agentId, limit: HISTORY_LIMIT }),
    ]);
    if (agent === null) return;
    const policy = deps.policyFor(agent.agentType);
    const now = clock.now();
    // A supervised agent leaves while its supervisor restarts or stops it: not the end of its ladder.
    const supervisor =
      agent.status === 'left' && agent.supervisorId !== null
        ? await store.getAgent(agent.supervisorId)
        : null;
    const supervised =
      supervisor !== null && supervisor.status !== 'left' && supervisor.status !== 'terminated';
    const ended = agent.status === 'terminated' || (agent.status === 'left' && !supervised);
    const outage = agent.conditions.some((c) => c.condition === 'dependency_down');
    const openConditions = new Map(agent.conditions.map((c) => [episodeKey(c.condition, c.taskId), c]));

    // The attempts under way: judge each; those still open block a new one for their condition.
    const busy = new Set<string>();
    /** Whether this step changed an intervention (then the history is read again below). */
    let changed = false;
    for (const i of history) {
      if (i.condition === 'manual' || (i.state !== 'pending' && i.state !== 'held')) continue;
      const rung = i.rung === null ? undefined : policy.recoveryActions[i.rung];
      if (rung === undefined || rung.action !== i.action) {
        changed = true;
        await end(i, 'skipped', 'its rung is no longer in the policy');
        continue;
      }
      const failed =
        i.condition === 'recovery_failed' ? String(i.evidence.failedCondition ?? '') : i.condition;
      const facts: AttemptFacts = {
        now,
        conditionOpen: openConditions.has(episodeKey(failed as Episode['trigger'], i.taskId)),
        outage,
        agent: {
          incarnation: agent.incarnation,
          startedAt: agent.startedAt,
          lastHeartbeatAt: agent.lastHeartbeatAt,
          ended,
        },
        quietPeriodMs: policy.quietPeriodMs,
      };
      if (rung.action === 'reassign') facts.tasks = await reassignedTasks(i);
      if (rung.action === 'alert') {
        const handle = typeof i.evidence.alertId === 'string' ? i.evidence.alertId : null;
        facts.alert = handle === null ? 'failed' : await deps.alerts.delivery(handle);
      }
      const verdict = judgeAttempt(i, rung, facts);
      if (verdict.kind !== 'keep') changed = true;
      switch (verdict.kind) {
        case 'keep':
          busy.add(episodeKey(i.condition, i.taskId));
          break;
        case 'end':
          await end(i, verdict.state, verdict.reason);
          if (rung.action === 'terminate' && verdict.state === 'succeeded') {
            await deps.terminated(agentId, `terminated by the recovery ladder (${i.condition})`);
            return;
          }
          break;
        case 'hold':
          await hold(i, true);
          busy.add(episodeKey(i.condition, i.taskId));
          break;
        case 'act':
          if (i.state === 'held') await hold(i, false);
          await act(i, rung, agent);
          busy.add(episodeKey(i.condition, i.taskId));
          break;
        case 'restart':
          await sendRestart(i);
          busy.add(episodeKey(i.condition, i.taskId));
          break;
      }
    }
    if (ended) return;
    // Well again after its ladder ran out: the recovery_failed alert has no reason to fire.
    if (agent.conditions.length === 0 && history.some((i) => i.condition === 'recovery_failed')) {
      await deps.alerts.clear(agentId, 'recovery_failed');
    }

    // Open conditions without an attempt under way: the next rung, or recovery_failed. The history
    // is read again only when the attempts above changed it (a round trip of up to 500 rows saved on
    // the common path: a condition just opened, nothing under way).
    const latest = changed
      ? (await store.listInterventions({ agentId, limit: HISTORY_LIMIT })).interventions
      : history;
    for (const c of agent.conditions) {
      const key = episodeKey(c.condition, c.taskId);
      if (busy.has(key)) continue;
      const episode: Episode = { trigger: c.condition, taskId: c.taskId, since: c.since };
      const holdsTask =
        c.taskId === null ? agent.currentTaskIds.length > 0 : agent.currentTaskIds.includes(c.taskId);
      const next = nextStep({
        now,
        rungs: policy.recoveryActions,
        forMs: policy.forMs,
        episode,
        history: latest,
        outage,
        holdsTask,
      });
      if (next.kind === 'start') {
        await open(agent, episode, next.rung, next.attempt, next.action, next.held, c.evidence);
        continue;
      }
      if (next.kind === 'wait' || next.kind === 'settled') continue;
      // No rung answers it at all: nothing failed, there is just no recovery for it (the diagnosis says so).
      const from = attemptsFrom(episode, now);
      const tried = latest
        .filter((i) => i.condition === c.condition && i.taskId === c.taskId && i.startedAt >= from)
        .reverse();
      if (tried.length === 0) continue;
      // Exhausted: recovery_failed, once per episode; then the agent waits for a person.
      const rfKey = episodeKey('recovery_failed', c.taskId);
      if (busy.has(rfKey)) continue;
      const rf: Episode = { trigger: 'recovery_failed', taskId: c.taskId, since: c.since };
      const rfNext = nextStep({
        now,
        rungs: policy.recoveryActions,
        forMs: 0,
        episode: rf,
        history: latest,
        outage,
        holdsTask,
      });
      if (rfNext.kind === 'start') {
        await open(agent, rf, rfNext.rung, rfNext.attempt, rfNext.action, rfNext.held, c.evidence, {
          failedCondition: c.condition,
          attempts: tried.map((i) => ({
            action: i.action,
            rung: i.rung,
            attempt: i.attempt,
            state: i.state,
          })),
        });
        busy.add(rfKey);
        continue;
      }
      const reported = leftForAPerson.get(agentId) ?? new Map<string, number>();
      leftForAPerson.set(agentId, reported);
      if (reported.get(key) !== c.since) {
        reported.set(key, c.since);
        logger.warn(
          { agentId, condition: c.condition, taskId: c.taskId ?? undefined, since: c.since },
          'recovery ladder exhausted: the agent is left for a person',
        );
      }
    }
    const reported = leftForAPerson.get(agentId);
    for (const [key, since] of reported ?? []) {
      if (openConditions.get(key)?.since !== since) reported?.delete(key);
    }
    if (reported?.size === 0) leftForAPerson.delete(agentId);
  }

  async function open(
    agent: Agent,
    episode: Episode,
    rung: number,
    attempt: number,
    action: RecoveryAction,
    held: boolean,
    conditionEvidence: JsonObject,
    extra: JsonObject = {},
  ): Promise<void> {
    const shard = shardOf(agent.id, deps.shards().count);
    const opened = await store.openIntervention({
      id: newId('itv', clock.now()),
      agentId: agent.id,
      incarnation: agent.incarnation,
      taskId: episode.taskId,
      condition: episode.trigger,
      action: action.action,
      rung,
      attempt,
      reason: `${episode.trigger}${episode.taskId === null ? '' : ` (task ${episode.taskId})`}: rung ${rung + 1} (${action.action}), attempt ${attempt} of ${action.maxAttempts}`,
      evidence: {
        condition: conditionEvidence,
        conditionSince: episode.since,
        metrics: (agent.metrics ?? null) as JsonObject | null,
        lastHeartbeatAt: agent.lastHeartbeatAt,
        status: agent.status,
        ...(held ? { heldFor: 'a dependency it needs is down' } : {}),
        ...extra,
      },
      actor,
      coordinatorId: deps.coordinatorId,
      shardEpoch: deps.shardEpoch(shard),
      held,
    });
    // Null: another coordinator opened one for this condition first; it acts.
    if (opened === null) return;
    deps.interventions.publish(opened);
    logger.info(
      {
        agentId: agent.id,
        intervention: opened.id,
        condition: episode.trigger,
        action: action.action,
        rung,
        attempt,
        held,
      },
      held ? 'recovery rung held: a dependency it needs is down' : 'recovery rung started',
    );
    if (!held) await act(opened, action, agent);
  }

  async function sweep(): Promise<void> {
    const held = deps.shards();
    if (held.ids.length === 0) return;
    const agents = new Set<string>();
    for (const c of await store.listConditions({ open: true, limit: 100_000 })) agents.add(c.agentId);
    const open = await store.listInterventions({ states: ['pending', 'held'], limit: 100_000 });
    for (const i of open.interventions) if (i.condition !== 'manual') agents.add(i.agentId);
    // A few ladders at a time: all at once, a sweep over a hundred agents in trouble held every pooled
    // PostgreSQL connection for a few hundred ms each second.
    await forEachLimited([...agents].filter(owns), BACKGROUND_STORE_CALLS, run);
  }

  const sweeper = every(clock, deps.sweepMs, sweep, (err) =>
    logger.warn({ err }, 'recovery ladder sweep failed'),
  );

  return {
    start() {
      started = true;
      sweeper.start();
    },
    stop() {
      started = false;
      sweeper.stop();
    },
    poke(agentId) {
      if (started && owns(agentId)) void run(agentId);
    },
    sweep,
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running.values()]);
    },
    stats,
  };
}
