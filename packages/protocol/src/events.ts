/** Server-sent events on `GET /v1/events` (docs/protocol.md). Each `data:` is one of these. */
import type { Agent, FatalReport } from './agent.js';
import type { Alert } from './alerts.js';
import type { Task, TaskEvent } from './task.js';
import type { AgentCondition, Intervention } from './watchdog.js';

export type StreamEvent =
  | { type: 'task.created'; at: number; task: Task }
  | { type: 'task.transition'; at: number; task: Task; event: TaskEvent }
  | { type: 'task.progress'; at: number; taskId: string; progress: number | null; phase: string | null }
  | { type: 'agent.registered'; at: number; agent: Agent }
  | { type: 'agent.status'; at: number; agent: Agent }
  | {
      type: 'agent.condition';
      at: number;
      agentId: string;
      agentType: string;
      /** `opened`, or `closed` (then `closedAt` says when and `closeReason` why). */
      state: 'opened' | 'closed';
      condition: AgentCondition;
      closedAt: number | null;
      closeReason: string | null;
    }
  /** An intervention was opened, held, resumed or ended (every state change). */
  | { type: 'intervention'; at: number; intervention: Intervention }
  /** An alert opened, changed (agents, severity), was notified, delivered or resolved (every change). */
  | { type: 'alert'; at: number; alert: Alert }
  /**
   * A supervisor gave up on a child: its restart budget is spent (`fatal`), it will not be started
   * again. Published once per report by the coordinator the supervisor's heartbeat reached.
   */
  | { type: 'agent.fatal'; at: number; supervisorId: string; report: FatalReport };

export type StreamEventType = StreamEvent['type'];
