/**
 * Human text for diagnosis reasons: one message per reason (no trailing period; the summary adds it)
 * and actionable suggestions naming the command to run. Pure; reads only the reason's evidence.
 */
import type { DiagnosisCode, JsonObject, Task } from '@rouse/protocol';

const iso = (ms: unknown): string =>
  typeof ms === 'number' ? new Date(ms).toISOString() : 'an unknown time';
const secs = (ms: unknown): string =>
  typeof ms === 'number' ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s` : '?';
const str = (v: unknown): string => (v === null || v === undefined ? 'unknown' : String(v));

export function messageFor(task: Task, code: DiagnosisCode, d: JsonObject): string {
  switch (code) {
    case 'completed':
      return `it completed on attempt ${str(d.attempt)} at ${iso(d.finishedAt)}`;
    case 'cancelled':
      return `it was cancelled by ${str(d.actor)} at ${iso(d.finishedAt)} (${str(d.reason)})`;
    case 'exhausted_attempts':
      return `it used all ${str(d.maxAttempts)} attempts; the last ended ${str(d.lastStatus)}${lastError(d)}`;
    case 'non_retryable_error':
      return `attempt ${str(d.attempt)} failed with a non-retryable error${lastError(d, 'error')}`;
    case 'backoff_wait':
      return `attempt ${str(d.attempt)} of ${str(d.maxAttempts)} ended${lastError(d)}; the retry waits for its backoff until ${iso(d.nextAttemptAt)} (in ${secs(d.inMs)})`;
    case 'scheduled_later':
      return `it is scheduled to run at ${iso(d.runAt)} (in ${secs(d.inMs)})`;
    case 'dependency_unavailable':
      return `it requires ${str(d.name)}, which is ${str(d.state)}${d.until === null ? '' : ` until ${iso(d.until)}`}, so it is not dispatched`;
    case 'no_agents_for_type':
      return `no live agent serves type "${task.type}"`;
    case 'agents_not_polling':
      return `${str(d.agents)} agent(s) serve type "${task.type}" but none asked for work in the last ${secs(d.pollStaleAfterMs)} (last poll ${d.lastPollAt === null ? 'never' : `at ${iso(d.lastPollAt)}`})`;
    case 'agents_busy':
      return `all ${str(d.agents)} polling agent(s) for type "${task.type}" are busy with ${str(d.heldTasks)} task(s)`;
    case 'queued_behind':
      return `${str(d.ahead)} claimable task(s) of type "${task.type}" are ahead of it in the queue`;
    case 'claimable_now':
      return 'it is claimable now and goes to the next agent that polls';
    case 'claimed_not_started':
      return `agent ${str(d.agentId)} claimed it at ${iso(d.claimedAt)} but has not started it; it times out in ${secs(d.expiresInMs)}`;
    case 'heartbeat_late':
      return `the heartbeat from agent ${str(d.agentId)} is late by ${secs(d.lateByMs)}; the lease expires at ${iso(d.leaseExpiresAt)}`;
    case 'progress_stalled':
      return `heartbeats arrive but progress has not changed for ${secs(d.unchangedForMs)} (stall limit ${secs(d.stallTimeoutMs)})`;
    case 'awaiting_write_back':
      return `the agent finished executing and is writing the result back; Rouse waits until ${iso(d.graceUntil)}${d.hasUploadedResult ? ', then completes it from the uploaded result' : ', then times it out'}`;
    case 'running_normally':
      return `agent ${str(d.agentId)} is running it and heartbeating (progress ${str(d.progress)}${d.phase ? `, phase "${String(d.phase)}"` : ''})`;
  }
}

export function suggestionsFor(task: Task, code: DiagnosisCode, d: JsonObject): string[] {
  const id = task.id;
  switch (code) {
    case 'completed':
      return [`fetch the result: GET /v1/tasks/${id}/result`];
    case 'cancelled':
      return ['submit a new task if the work is still needed'];
    case 'exhausted_attempts':
      return [`read what happened: rouse logs ${id}`, `run it once more: rouse retry ${id}`];
    case 'non_retryable_error':
      return [`read what happened: rouse logs ${id}`, `fix the cause, then: rouse retry ${id}`];
    case 'backoff_wait':
      return [
        `nothing to do: it becomes claimable at ${iso(d.nextAttemptAt)}`,
        `see the last attempt: rouse logs ${id}`,
      ];
    case 'scheduled_later':
      return [`nothing to do: it becomes claimable at ${iso(d.runAt)}`];
    case 'dependency_unavailable':
      return [
        `wait for ${str(d.name)} to recover, or report it up: POST /v1/dependencies/${str(d.name)}/reports {"state":"up"}`,
      ];
    case 'no_agents_for_type':
      return [
        `start a worker for type "${task.type}": an @rouse/sdk Worker with taskTypes: ["${task.type}"]`,
      ];
    case 'agents_not_polling':
      return [`check the agents: rouse agents`, `restart the workers for type "${task.type}"`];
    case 'agents_busy':
    case 'queued_behind':
      return [`add capacity for type "${task.type}": start more workers or raise their concurrency`];
    case 'claimable_now':
      return [];
    case 'claimed_not_started':
      return [
        `check agent ${str(d.agentId)}: rouse agents`,
        'it is retried automatically if it never starts',
      ];
    case 'heartbeat_late':
      return [
        `check agent ${str(d.agentId)}: rouse agents`,
        'it is retried automatically if the lease expires',
      ];
    case 'progress_stalled':
      return [`inspect the output: rouse logs ${id}`, `if it is stuck: rouse cancel ${id}`];
    case 'awaiting_write_back':
      return ['nothing to do yet: the write-back grace is running'];
    case 'running_normally':
      return [`follow it: rouse logs -f ${id}`];
  }
}

function lastError(d: JsonObject, field = 'lastError'): string {
  const e = d[field];
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return '';
  return ` (${str(e.code)}: ${str(e.message)})`;
}
