/**
 * The task-budget rule of `resource_runaway` (pure): an agent that runs tasks under a budget (a
 * coding-agent adapter: tokens, dollars, turns, wall-clock time) reports each held task's spend
 * against its tightest limit in its heartbeat's `metrics.budgets`. A report whose `used` is past its
 * `limit`, for a task the agent still holds, is a runaway of that task: one `resource_runaway`
 * condition per task (`taskId` set). It closes when the task is no longer held (the adapter fails it
 * for good right after the report) or a later heartbeat's metrics no longer report it past its limit.
 */
import type { JsonObject, TaskBudgetReport } from '@rouse/protocol';

/** A held task past one of its budget limits. */
export interface BudgetFinding {
  taskId: string;
  evidence: JsonObject;
}

/**
 * The held tasks past a budget limit, in report order, one per task (its first report past a limit).
 * Reports for tasks not in `heldTaskIds` are ignored: a task that ended has nothing left to spend.
 */
export function budgetFindings(
  budgets: readonly TaskBudgetReport[] | undefined,
  heldTaskIds: ReadonlySet<string>,
): BudgetFinding[] {
  if (budgets === undefined) return [];
  const out: BudgetFinding[] = [];
  const seen = new Set<string>();
  for (const b of budgets) {
    if (!(b.used > b.limit) || !heldTaskIds.has(b.taskId) || seen.has(b.taskId)) continue;
    seen.add(b.taskId);
    out.push({
      taskId: b.taskId,
      evidence: { rule: 'task_budget', taskId: b.taskId, kind: b.kind, limit: b.limit, used: b.used },
    });
  }
  return out;
}
