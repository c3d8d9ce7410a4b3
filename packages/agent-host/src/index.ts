/**
 * `@rouse/agent-host` — the agent host side of Rouse (docs/design.md §6.6): `rouse supervise` runs an
 * agent host's programs, restarts them with backoff inside a budget, samples their process trees,
 * heartbeats for all of them at once and carries out the watchdog's commands for them; and the
 * adapters of `rouse agent` (docs/adapters.md): coding-agent CLIs and shell commands as task workers.
 */

export type { BudgetLimits } from './adapters/budget.js';
export type {
  CliErrorKind,
  CliEvent,
  CliFlavor,
  CliRunPlan,
} from './adapters/cli-flavor.js';
export type { CliTypeDefaults } from './adapters/cli-payload.js';
export {
  CLI_TASK_DEFAULTS,
  type CliTaskOptions,
  type CliTaskResult,
  cliTaskHandler,
  defaultNudge,
  defaultResumePrompt,
} from './adapters/cli-task.js';
export { codexConfigToml, codexFlavor } from './adapters/codex/codex-flavor.js';
export { FLAVORS, flavorNamed, flavorNames } from './adapters/flavors.js';
export { GroupGuard, type GroupRegistry, sharedGroupGuard } from './adapters/group-guard.js';
export { type GroupExit, ProcessGroup } from './adapters/process-group.js';
export {
  AgentOptionsError,
  adapterHandler,
  adapterNames,
  type RunAgentEvent,
  type RunAgentOptions,
  runAgent,
} from './adapters/run-agent.js';
export {
  type ShellAdapterOptions,
  type ShellWake,
  shellTaskHandler,
} from './adapters/shell/shell-adapter.js';
export { carryOutCommand } from './child-commands.js';
export { splitChildren, takeWithin } from './heartbeat-body.js';
export {
  HostConfigError,
  PROGRAM_DEFAULTS,
  parseHostConfig,
  type ResolvedHostConfig,
  type ResolvedProgram,
} from './host-config.js';
export { OutputRing } from './output-ring.js';
export { ProcSampler, parseProcStat, readProcTable, treeOf } from './proc-stat.js';
export { type InstanceEvent, ProgramInstance } from './program-instance.js';
export { type RestartDecision, type RestartPolicy, RestartRules } from './restart-rules.js';
export { type RunSupervisorOptions, runSupervisor } from './run-supervisor.js';
export { Supervisor, type SupervisorEvent, SupervisorNameInUseError } from './supervisor.js';
