/**
 * The policies in force: what one policy file (or none) says, resolved and indexed. Built by
 * `parsePolicies` (a file) or `DEFAULT_POLICY_SET` (no file); immutable — a reload builds a new one.
 */
import type { JsonObject, PolicyView } from '@rouse/protocol';
import { type AlertTiming, type ChannelConfig, resolveAlerts, resolveChannel } from './alert-settings.js';
import type { PolicyFileInput } from './policy-schema.js';
import { DEFAULT_POLICY, policyView, type ResolvedPolicy, resolvePolicy } from './resolved-policy.js';
import { resolveTaskType, type TaskTypeDefaults, taskTypeView } from './task-type-defaults.js';

export class PolicySet {
  /** The file they came from, or null (the built-in defaults). */
  readonly source: string | null;
  /** The file's policies, in file order. */
  readonly policies: readonly ResolvedPolicy[];
  /** Alert channels by name. */
  readonly channels: ReadonlyMap<string, ChannelConfig>;
  readonly alerts: AlertTiming;
  readonly #byType: ReadonlyMap<string, ResolvedPolicy>;
  readonly #fallback: ResolvedPolicy;
  readonly #taskTypes: ReadonlyMap<string, TaskTypeDefaults>;

  /**
   * Resolves a parsed file (already checked: unique names and agent types, at most one `"*"`,
   * alert channels defined; `parsePolicies` makes sure of it).
   */
  constructor(file: PolicyFileInput, source: string | null) {
    this.source = source;
    const channelEntries = Object.entries(file.channels ?? {});
    const channelNames = channelEntries.map(([name]) => name);
    this.channels = new Map(channelEntries.map(([name, c]) => [name, resolveChannel(c)]));
    this.alerts = resolveAlerts(file.alerts);
    this.policies = (file.policies ?? []).map((p) => resolvePolicy(p, channelNames));
    this.#byType = new Map(this.policies.map((p) => [p.agentType, p]));
    this.#fallback = this.#byType.get('*') ?? DEFAULT_POLICY;
    this.#taskTypes = new Map(Object.entries(file.task_types ?? {}).map(([t, d]) => [t, resolveTaskType(d)]));
  }

  /** The policy for an agent type: the one naming it, else the `"*"` policy, else the built-in `default`. */
  forAgentType(agentType: string): ResolvedPolicy {
    return this.#byType.get(agentType) ?? this.#fallback;
  }

  /** The file's timing defaults for a task type, or undefined when it has none. */
  taskTypeDefaults(taskType: string): TaskTypeDefaults | undefined {
    return this.#taskTypes.get(taskType);
  }

  /** Every policy in force, in file order; the built-in `default` last when the file has no `"*"`. */
  views(): PolicyView[] {
    const all = this.#fallback === DEFAULT_POLICY ? [...this.policies, DEFAULT_POLICY] : this.policies;
    return all.map(policyView);
  }

  /** Task type defaults on the wire (`PoliciesResponse.taskTypes`). */
  taskTypeViews(): Record<string, JsonObject> {
    return Object.fromEntries([...this.#taskTypes].map(([t, d]) => [t, taskTypeView(d)]));
  }
}

/** The policies in force without a file: the built-in `default` for every agent type. */
export const DEFAULT_POLICY_SET: PolicySet = new PolicySet({}, null);
