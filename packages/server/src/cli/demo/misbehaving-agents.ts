/**
 * The demo's badly behaved agents, written against the raw protocol (SDK `Client` agent calls) so that
 * they can fail in ways the SDK Worker never would:
 * - crashy: claims a task and dies before starting it (no leave, no heartbeat) → claim timeout;
 * - hangy: starts, heartbeats a little, then freezes (handler and heartbeats stuck) → heartbeat timeout;
 *   later it "wakes up" and tries to complete with its old version → 409 stale_version (fencing);
 * - lossy: finishes, uploads its result, says `executionDone`, and vanishes before `complete` →
 *   the coordinator waits the write-back grace and completes the task from the uploaded result.
 */
import type { Task } from '@rouse/protocol';
import { type Client, RouseApiError } from '@rouse/sdk';
import { renderDiagnosis } from '../format/diagnosis.js';
import { formatDuration } from '../format/time.js';
import { sleep } from '../sleep.js';
import type { DemoBook } from './book.js';
import type { Narrator } from './narrator.js';

export interface RawAgent {
  name: string;
  agentId: string;
  client: Client;
}

export async function registerRawAgent(enroll: Client, name: string, types: string[]): Promise<RawAgent> {
  const res = await enroll.registerAgent({
    agentType: 'demo-misbehaving',
    name,
    taskTypes: types,
    pid: process.pid,
  });
  return { name, agentId: res.agent.id, client: enroll.withToken(res.token) };
}

/** Claim exactly one task (the oldest claimable of `types`). */
export async function claimOne(agent: RawAgent, types: string[]): Promise<Task> {
  const res = await agent.client.claim(agent.agentId, { types, max: 1, waitMs: 5000 });
  const task = res.tasks[0];
  if (!task) throw new Error(`${agent.name} found no task to claim`);
  return task;
}

interface Env {
  book: DemoBook;
  admin: Client;
  narrator: Narrator;
  signal: AbortSignal;
}

/** Print a short live diagnosis (summary and reasons, as `rouse why` would). */
export async function liveWhy(env: Env, task: Task, title: string): Promise<void> {
  try {
    const d = await env.admin.diagnose(task.id);
    env.book.say(
      env.book.style.yellow('?'),
      `${title}: ${env.book.style.bold(`rouse why ${env.book.task(task)}`)}`,
    );
    const lines = renderDiagnosis({ ...d, suggestions: [] }, env.book.ctx.now(), env.book.style);
    for (const line of lines) if (line.trim()) env.book.detail(line);
  } catch (err) {
    env.book.detail(`(diagnosis failed: ${(err as Error).message})`);
  }
}

export function runCrashy(env: Env, agent: RawAgent, task: Task): void {
  env.book.say(
    env.book.style.red('💥'),
    `${agent.name} crashes right after claiming ${env.book.task(task)}: no start, no heartbeat, no goodbye`,
  );
}

/** Resolves once `hangy` made its late, fenced write (or the demo stopped). */
export async function runHangy(env: Env, agent: RawAgent, task: Task): Promise<{ fenced: boolean }> {
  const { book } = env;
  const v = task.version;
  // Subscribe before anything can happen: we need the moment another agent claims the task.
  let reclaimed: ((t: Task) => void) | undefined;
  const reclaimedP = new Promise<Task>((resolve) => {
    reclaimed = resolve;
  });
  const off = env.narrator.onTransition((t, ev) => {
    if (t.id === task.id && ev.to === 'claimed' && t.version > v) reclaimed?.(t);
  });
  try {
    await agent.client.startTask(task.id, v);
    const interval = task.timing.heartbeatIntervalMs;
    for (let i = 1; i <= 4 && !env.signal.aborted; i++) {
      if (i > 1) await sleep(interval, env.signal);
      await agent.client.agentHeartbeat(agent.agentId, {
        status: 'running',
        tasks: [{ taskId: task.id, version: v, progress: i * 0.1, phase: 'fetching sources' }],
      });
    }
    if (env.signal.aborted) return { fenced: false };
    book.say(
      book.style.red('❄'),
      `${agent.name} freezes mid-task on ${book.task(task)} (a stuck call): its handler and its heartbeats stop`,
    );
    // Ask "why" halfway between "heartbeat late" (1.5 intervals of silence) and the timeout, so the
    // diagnosis shows the late heartbeat even on a slow machine.
    const silenceMs = Math.round((1.5 * interval + task.timing.heartbeatTimeoutMs) / 2);
    await sleep(silenceMs, env.signal);
    if (env.signal.aborted) return { fenced: false };
    await liveWhy(env, task, `${formatDuration(silenceMs)} of silence`);
    const again = await Promise.race([reclaimedP, sleep(30_000, env.signal).then(() => null)]);
    if (!again || env.signal.aborted) return { fenced: false };
    await sleep(300, env.signal);
    book.say(
      book.style.yellow('⏰'),
      `${agent.name} wakes up and tries to complete ${book.task(task)} with its old version ${v} (the task is at version ${again.version}, held by ${book.agent(again.agentId)})`,
    );
    try {
      await agent.client.completeTask(task.id, { version: v, result: { summary: 'a late, stale result' } });
      book.say(book.style.red('!'), 'the stale write was accepted — fencing is broken');
      return { fenced: false };
    } catch (err) {
      if (err instanceof RouseApiError) {
        book.say(
          book.style.green('🛡'),
          `fenced: ${err.status} ${err.code} — the late result is discarded; the new holder's result will stand`,
        );
        return { fenced: true };
      }
      throw err;
    }
  } finally {
    off();
  }
}

export async function runLossy(
  env: Env,
  agent: RawAgent,
  task: Task,
  writeBackGraceMs: number,
): Promise<void> {
  const { book } = env;
  const v = task.version;
  await agent.client.startTask(task.id, v);
  for (let i = 1; i <= 3 && !env.signal.aborted; i++) {
    await agent.client.agentHeartbeat(agent.agentId, {
      status: 'running',
      tasks: [{ taskId: task.id, version: v, progress: i * 0.3, phase: 'summarizing' }],
    });
    await sleep(task.timing.heartbeatIntervalMs, env.signal);
  }
  if (env.signal.aborted) return;
  const result = { summary: `summary of ${JSON.stringify(task.payload)}`, by: agent.name };
  await agent.client.uploadResult(task.id, v, JSON.stringify(result), 'application/json');
  await agent.client.agentHeartbeat(agent.agentId, {
    status: 'running',
    tasks: [{ taskId: task.id, version: v, progress: 1, phase: 'writing back', executionDone: true }],
  });
  book.say(
    book.style.red('📉'),
    `${agent.name} finished ${book.task(task)}, uploaded its result, reported executionDone — and lost its connection before \`complete\``,
  );
  book.detail(
    `Rouse does not declare it dead after ${formatDuration(task.timing.heartbeatTimeoutMs)}: it waits the write-back grace (${formatDuration(writeBackGraceMs)})`,
  );
  await sleep(Math.max(task.timing.heartbeatTimeoutMs + 200, 1000), env.signal);
  if (env.signal.aborted) return;
  await liveWhy(env, task, 'meanwhile');
}
