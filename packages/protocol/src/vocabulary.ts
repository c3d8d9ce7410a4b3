/**
 * The protocol's closed vocabularies and small limits: task and agent statuses, command types and
 * outcomes, budget kinds, dependency states, signal names, alert and intervention states. Both the
 * wire types (task.ts, agent.ts, watchdog.ts, alerts.ts) and the schemas that check requests
 * (schemas/) read them from here, so neither needs the other to know them.
 */

/** The task lifecycle states (docs/design.md §2). */
export const TASK_STATUSES = [
  'created',
  'claimed',
  'running',
  'completed',
  'failed',
  'timeout',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** What an agent may say of itself. Anything else is the coordinator's conclusion. */
export const REPORTED_AGENT_STATUSES = ['idle', 'running', 'error', 'terminating'] as const;
export type ReportedAgentStatus = (typeof REPORTED_AGENT_STATUSES)[number];

/**
 * The derived status, highest precedence first: `left > terminated > lost > terminating > stalled >
 * error > at_risk > running > idle`.
 * - `left`: it said goodbye (DELETE); `terminated`: the watchdog ended it;
 * - `lost`: its lease ran out (condition `heartbeat_timeout`);
 * - `stalled`: heartbeats arrive but its progress does not move (`progress_stalled`);
 * - `error`: it reports an error; `at_risk`: a dependency it needs is down, or it runs away with
 *   memory or CPU (`dependency_down`, `resource_runaway`, `error_persisting`).
 */
export const AGENT_STATUSES = [
  'left',
  'terminated',
  'lost',
  'terminating',
  'stalled',
  'error',
  'at_risk',
  'running',
  'idle',
] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/**
 * What a task's budget limits (`metrics.budgets[].kind`): input + output tokens, dollars, turns, or
 * the milliseconds of wall-clock time of its attempt.
 */
export const BUDGET_KINDS = ['tokens', 'cost_usd', 'turns', 'wall_clock_ms'] as const;
export type BudgetKind = (typeof BUDGET_KINDS)[number];

/** Budget reports one heartbeat may carry (`metrics.budgets`). */
export const MAX_BUDGET_REPORTS = 64;

export const DEPENDENCY_STATES = ['up', 'down', 'rate_limited'] as const;
export type DependencyState = (typeof DEPENDENCY_STATES)[number];

/** Signals a command may ask a supervisor to send (POSIX names; a `send_signal` rung's). */
export const SIGNAL_NAMES = [
  'SIGHUP',
  'SIGINT',
  'SIGQUIT',
  'SIGABRT',
  'SIGKILL',
  'SIGUSR1',
  'SIGUSR2',
  'SIGPIPE',
  'SIGALRM',
  'SIGTERM',
  'SIGCONT',
  'SIGSTOP',
  'SIGTSTP',
  'SIGTTIN',
  'SIGTTOU',
  'SIGURG',
  'SIGXCPU',
  'SIGXFSZ',
  'SIGVTALRM',
  'SIGPROF',
  'SIGWINCH',
  'SIGIO',
  'SIGPWR',
  'SIGSYS',
] as const;
export type SignalName = (typeof SIGNAL_NAMES)[number];

export const COMMAND_TYPES = ['wake', 'cancel', 'checkpoint', 'restart', 'terminate'] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

/**
 * A supervised child's state: `running`; `backoff` (exited, waiting to start again); `stopped` (by
 * a command or the supervisor's own stop); `fatal` (its restart budget is spent: no more restarts).
 */
export const SUPERVISED_STATES = ['running', 'backoff', 'stopped', 'fatal'] as const;
export type SupervisedState = (typeof SUPERVISED_STATES)[number];

/** The most output an acknowledgement (or a fatal report) carries: the last lines of a process a supervisor stopped. */
export const MAX_ACK_OUTPUT_CHARS = 8192;

/** How an agent answers a command (in its next heartbeat's `acks`, or at once by `commands/acks`). */
export const COMMAND_OUTCOMES = ['done', 'failed', 'unsupported'] as const;
export type CommandOutcome = (typeof COMMAND_OUTCOMES)[number];

/** `firing` while at least one agent is in the condition; `resolved` once none is (for good). */
export const ALERT_STATES = ['firing', 'resolved'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/**
 * `pending`: under way (its command sent, its success criterion awaited); `held`: waiting (a
 * dependency outage no action can cure); then `succeeded`, `failed` or `skipped` for good.
 */
export const INTERVENTION_STATES = ['pending', 'held', 'succeeded', 'failed', 'skipped'] as const;
export type InterventionState = (typeof INTERVENTION_STATES)[number];

/**
 * The log stream of the lines the coordinator writes into a task's log itself: once, where the log
 * reached its size cap and later lines were dropped. Agents may not write to it.
 */
export const COORDINATOR_LOG_STREAM = 'rouse';

/**
 * How the reason of a command the recovery ladder sends begins (a person's `rouse wake --reason` does
 * not): the rest names the condition, rung and attempt, for logs and supervisors, not for a model.
 */
export const LADDER_REASON_PREFIX = 'recovery ladder: ';
