/**
 * What each rung of the recovery ladder does (docs/design.md §6.4): the commands it sends — recorded
 * on the intervention before they are queued, since a supervisor's answer can come back within
 * milliseconds —, the reassignment of a stuck agent's tasks, the alerts it raises.
 */
import {
  type Agent,
  type AgentCommand,
  type Intervention,
  type JsonObject,
  LADDER_REASON_PREFIX,
} from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { RecoveryAction } from '../../core/policies/resolved-policy.js';
import type { AttemptFacts } from '../../core/watchdog/ladder.js';
import type { Store, Transitioned } from '../../store/store.js';
import { type AgentCommands, newCommandId } from '../agent-commands.js';
import type { LadderAlert, LadderAlerts } from './ladder-alerts.js';
import type { LadderSteps } from './ladder-steps.js';

export interface LadderActions {
  /** Carry out an intervention's action (opened, released from hold, or left unacted by its coordinator). */
  act(i: Intervention, rung: RecoveryAction, agent: Agent): Promise<void>;
  /** `snapshot_and_restart`, after the checkpoint: the restart. */
  sendRestart(i: Intervention): Promise<void>;
  /** The tasks a `reassign` took, as they are now. */
  reassignedTasks(i: Intervention): Promise<NonNullable<AttemptFacts['tasks']>>;
}

export function createLadderActions(deps: {
  store: Store;
  clock: Clock;
  logger: Logger;
  commands: AgentCommands;
  alerts: LadderAlerts;
  applyTransition: (t: Transitioned) => void;
  steps: LadderSteps;
  /** `coordinator:<id>`: who released a reassigned task. */
  actor: string;
}): LadderActions {
  const { store, clock, logger, actor } = deps;
  const { note, end } = deps.steps;

  async function act(i: Intervention, rung: RecoveryAction, agent: Agent): Promise<void> {
    const now = clock.now();
    const reason = `${LADDER_REASON_PREFIX}${i.reason}`;
    const task = i.taskId === null ? {} : { taskId: i.taskId };
    switch (rung.action) {
      case 'wake':
      case 'send_signal': {
        const command: AgentCommand & { id: string } = { type: 'wake', reason, ...task, id: newCommandId() };
        if (rung.action === 'send_signal') command.signal = rung.signal;
        await sendNoted(i, command, { actedAt: now }, agent);
        return;
      }
      case 'snapshot_and_restart': {
        await sendNoted(
          i,
          { type: 'checkpoint', reason, ttlMs: rung.snapshotTtlMs, ...task, id: newCommandId() },
          { actedAt: now, phase: 'checkpoint', checkpointAt: now, snapshotTtlMs: rung.snapshotTtlMs },
          agent,
        );
        return;
      }
      case 'terminate': {
        await sendNoted(
          i,
          { type: 'terminate', reason, graceMs: rung.graceMs, id: newCommandId() },
          { actedAt: now },
          agent,
        );
        return;
      }
      case 'reassign': {
        const ids = i.taskId === null ? agent.currentTaskIds : [i.taskId];
        const moved: string[] = [];
        for (const id of ids) {
          const t = await store.getTask(id);
          if (t === null || t.agentId !== i.agentId || t.leaseExpiresAt === null) continue;
          const released = await store.releaseAgentTasks({
            agentId: i.agentId,
            reason: 'agent_reassigned',
            task: { id, version: t.version },
            actor,
          });
          for (const r of released) {
            deps.applyTransition(r);
            moved.push(r.task.id);
          }
        }
        const alert = await raise(agent, rung, {
          condition:
            i.condition === 'recovery_failed' || i.condition === 'manual' ? 'recovery_failed' : i.condition,
          severity: 'high',
          channels: [],
          summary: `${moved.length} task(s) of agent ${agent.name} reassigned: ${i.reason}`,
          evidence: { tasks: moved },
          source: 'reassign',
        });
        await note(i, { actedAt: now, reassignedTaskIds: moved, alertId: alert?.id ?? null });
        return;
      }
      case 'alert': {
        const failed =
          i.condition === 'recovery_failed'
            ? ` (recovery failed for ${String(i.evidence.failedCondition)})`
            : '';
        const rf = i.condition === 'recovery_failed';
        const alert = await raise(agent, rung, {
          condition: rf || i.condition === 'manual' ? 'recovery_failed' : i.condition,
          severity: rung.severity,
          channels: rung.channels,
          summary: `agent ${agent.name} (${agent.agentType}): ${i.condition}${failed}`,
          evidence: i.evidence,
          source: rf ? 'recovery_failed' : 'alert_rung',
        });
        await note(i, { actedAt: now, alertId: alert?.id ?? null });
        if (alert === null) await end(i, 'failed', 'the alert could not be raised');
        else if (alert.channels === 0) {
          await end(
            i,
            'skipped',
            `alert ${alert.id} is recorded, but the policy file defines no channel to deliver it through`,
          );
        }
        return;
      }
    }
  }

  async function raise(
    agent: Agent,
    rung: RecoveryAction,
    alert: Omit<LadderAlert, 'agentId' | 'agentType'>,
  ): Promise<{ id: string; channels: number } | null> {
    try {
      return await deps.alerts.raise({ agentId: agent.id, agentType: agent.agentType, ...alert });
    } catch (err) {
      logger.warn({ err, agentId: agent.id, action: rung.action }, 'could not raise an alert');
      return null;
    }
  }

  async function sendRestart(i: Intervention): Promise<void> {
    await sendNoted(
      i,
      {
        type: 'restart',
        reason: `${LADDER_REASON_PREFIX}${i.reason}`,
        ...(i.taskId === null ? {} : { taskId: i.taskId }),
        id: newCommandId(),
      },
      { phase: 'restart', restartAt: clock.now() },
    );
  }

  /**
   * Record the command on the intervention, then queue it: its answer may come back within
   * milliseconds (a supervisor's long-poll), and must find the intervention that sent it. `agent`,
   * when the step has just read it, spares the queue reading it again.
   */
  async function sendNoted(
    i: Intervention,
    command: AgentCommand & { id: string },
    evidence: JsonObject,
    agent?: Agent,
  ) {
    await note(i, evidence, command.id);
    await deps.commands.enqueue(i.agentId, command, agent);
  }

  async function reassignedTasks(i: Intervention): Promise<NonNullable<AttemptFacts['tasks']>> {
    const ids = Array.isArray(i.evidence.reassignedTaskIds) ? i.evidence.reassignedTaskIds.map(String) : [];
    const tasks = await Promise.all(ids.map((id) => store.getTask(id)));
    return tasks.flatMap((t) =>
      t === null ? [] : [{ agentId: t.agentId, status: t.status, final: t.final }],
    );
  }

  return { act, sendRestart, reassignedTasks };
}
