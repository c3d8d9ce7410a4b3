/**
 * Child-process entry point for the detection workload: a tiny raw agent (no SDK, so its timing is
 * exactly what we say) that registers, claims ONE task with `start: true`, and sends an agent
 * heartbeat for it every `heartbeatIntervalMs` until it is SIGKILLed.
 *
 * argv[2]: JSON `DetectionAgentConfig`. stdout messages:
 * - `{type: 'claimed', taskId, version}`
 * - `{type: 'beat', n, ok, leaseExpiresAt, sentAt, ackAt}` after each acknowledged heartbeat
 *   (`leaseExpiresAt` is on the coordinator's clock; `sentAt`/`ackAt` local epoch ms)
 */
import type { AgentHeartbeatResponse, ClaimResponse, RegisterAgentResponse } from '@rouse/protocol';
import { HttpClient } from './http-client.js';

export interface DetectionAgentConfig {
  url: string;
  /** Enrollment token. */
  token: string;
  taskType: string;
  heartbeatIntervalMs: number;
}

function emit(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as DetectionAgentConfig;
  const enroll = new HttpClient({ url: config.url, token: config.token, maxSockets: 1 });
  const reg = await enroll.post<RegisterAgentResponse>('/v1/agents', {
    agentType: 'bench-detection',
    taskTypes: [config.taskType],
    pid: process.pid,
  });
  enroll.close();
  const http = new HttpClient({ url: config.url, token: reg.token, maxSockets: 2 });
  let task: ClaimResponse['tasks'][number] | undefined;
  while (!task) {
    const res = await http.post<ClaimResponse>(`/v1/agents/${reg.agent.id}/claim`, {
      types: [config.taskType],
      max: 1,
      waitMs: 5000,
      start: true,
    });
    task = res.tasks[0];
  }
  emit({ type: 'claimed', taskId: task.id, version: task.version });
  const beat = { taskId: task.id, version: task.version };
  let n = 0;
  // A fixed schedule (no jitter, no drift): beat k is sent at start + k × interval.
  const start = Date.now();
  for (;;) {
    n++;
    const due = start + n * config.heartbeatIntervalMs;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    const sentAt = Date.now();
    const res = await http.post<AgentHeartbeatResponse>(`/v1/agents/${reg.agent.id}/heartbeat`, {
      status: 'running',
      tasks: [beat],
    });
    const outcome = res.tasks.find((t) => t.taskId === task.id);
    emit({
      type: 'beat',
      n,
      ok: outcome?.ok ?? false,
      leaseExpiresAt: outcome?.leaseExpiresAt ?? null,
      sentAt,
      ackAt: Date.now(),
    });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `detection-agent: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
