/**
 * A worker's agent heartbeat carries a beat for every task it holds; the coordinator refuses bodies
 * over {@link MAX_HEARTBEAT_BYTES} (413), so a large one is sent as several.
 */
import type { AgentHeartbeatRequest, TaskBeat } from '@rouse/protocol';
import { MAX_HEARTBEAT_BYTES } from '@rouse/protocol';

/**
 * Split an agent heartbeat whose body would exceed `maxBytes` into several: the first carries status,
 * metrics and dependencies, each carries a share of the task beats.
 */
export function splitHeartbeat(
  req: AgentHeartbeatRequest,
  maxBytes = MAX_HEARTBEAT_BYTES,
): AgentHeartbeatRequest[] {
  const tasks = req.tasks ?? [];
  const { tasks: _omit, ...head } = req;
  const headBytes = Buffer.byteLength(JSON.stringify({ ...head, tasks: [] }));
  if (headBytes + tasks.reduce((n, t) => n + beatBytes(t), 0) <= maxBytes) return [req];
  const out: AgentHeartbeatRequest[] = [];
  let current: TaskBeat[] = [];
  let bytes = headBytes;
  for (const beat of tasks) {
    const b = beatBytes(beat);
    if (current.length > 0 && bytes + b > maxBytes) {
      out.push(out.length === 0 ? { ...head, tasks: current } : { tasks: current });
      current = [];
      bytes = 20;
    }
    current.push(beat);
    bytes += b;
  }
  if (current.length > 0 || out.length === 0)
    out.push(out.length === 0 ? { ...head, tasks: current } : { tasks: current });
  return out;
}

function beatBytes(beat: TaskBeat): number {
  // +1 for the comma between entries
  return Buffer.byteLength(JSON.stringify(beat)) + 1;
}
