/**
 * The monitor's typed events. Listen with `m.on('wake', ({ reason }) => ...)`. Listeners that throw are
 * logged, never thrown into the runtime; `error` events are informational (the monitor handled it).
 */
import type { Agent, AgentCommand, AgentHeartbeatRequest, AgentHeartbeatResponse } from '@rouse/protocol';
import type { RuntimeErrorEvent } from '../runtime/safe-emit.js';

export interface MonitorEvents {
  /** Registered: this process is `incarnation` of agent `agent.id`. */
  registered: [{ agent: Agent; incarnation: number; heartbeatIntervalMs: number }];
  /** A heartbeat was answered. */
  heartbeat: [{ request: AgentHeartbeatRequest; response: AgentHeartbeatResponse }];
  /** A `wake` command arrived (`interrupted` is set, `onWake` listeners ran). */
  wake: [{ reason: string | undefined }];
  /** Any command that arrived, after the monitor acted on it (`wake`, `terminate`: stop; others are yours). */
  command: [{ command: AgentCommand }];
  /** An `iteration()` ended (`error`: what it threw). */
  iteration: [{ durationMs: number; count: number; error?: unknown }];
  /** Something went wrong that the monitor handles itself (retry, next beat); for logs and metrics. */
  error: [RuntimeErrorEvent];
  /** The connection to the coordinator was lost. */
  disconnected: [{ error: unknown }];
  /** It is back after `downMs`. */
  reconnected: [{ downMs: number }];
  /** `stop()` finished: the last state was sent and the agent left. */
  stopped: [];
}
