/**
 * The demo's well-behaved agents: SDK Workers running in this process. `healthy-N` summarize
 * documents (progress, logs, a checkpoint); `flaky-1` calls a flaky "upstream" that fails with retryable
 * errors before it succeeds, and rejects a poisoned payload with a NonRetryableError.
 */
import { join } from 'node:path';
import type { Json, Task } from '@rouse/protocol';
import { NonRetryableError, type TaskContext, Worker } from '@rouse/sdk';
import type { DemoBook } from './book.js';

export interface FleetOptions {
  url: string;
  enrollmentToken: string;
  dataDir: string;
  heartbeatIntervalMs: number;
  healthy: number;
  book: DemoBook;
}

const PHASES = ['reading', 'thinking', 'writing'];

async function summarize(task: Task, ctx: TaskContext): Promise<Json> {
  const p = (task.payload ?? {}) as { doc?: string; ms?: number };
  const total = p.ms ?? 2000;
  const resumeFrom =
    typeof ctx.checkpointState === 'object' && ctx.checkpointState
      ? Number((ctx.checkpointState as { step?: number }).step ?? 0)
      : 0;
  for (let i = resumeFrom; i < PHASES.length; i++) {
    ctx.progress(i / PHASES.length, PHASES[i]);
    ctx.log(`${PHASES[i]} ${p.doc ?? 'the document'}`);
    await ctx.sleep(Math.round(total / PHASES.length));
    if (i === 0) await ctx.checkpoint({ step: 1 }, { thread: `thread-${task.id.slice(-6)}` });
  }
  ctx.progress(1, 'done');
  return { summary: `${p.doc ?? 'document'}: three key points`, words: 120 + (total % 97) };
}

async function callUpstream(task: Task, ctx: TaskContext): Promise<Json> {
  const p = (task.payload ?? {}) as { failures?: number; mode?: string };
  ctx.progress(0.2, 'calling upstream');
  await ctx.sleep(400);
  if (p.mode === 'poison') {
    throw new NonRetryableError('payload.url is not a valid URL: retrying cannot help', {
      code: 'bad_payload',
    });
  }
  if (p.mode === 'doomed' || task.attempt <= (p.failures ?? 0)) {
    ctx.log(`upstream answered 503 on attempt ${task.attempt}`, 'stderr');
    throw new Error('upstream API answered 503 Service Unavailable');
  }
  return { ok: true, succeededOnAttempt: task.attempt };
}

export function createFleet(o: FleetOptions): Worker[] {
  const common = {
    url: o.url,
    token: o.enrollmentToken,
    heartbeatIntervalMs: o.heartbeatIntervalMs,
    waitMs: 2000,
    shutdownSignals: false as const,
    shutdownGraceMs: 1000,
  };
  const workers: Worker[] = [];
  for (let i = 1; i <= o.healthy; i++) {
    const name = `healthy-${i}`;
    workers.push(
      new Worker({
        ...common,
        agentType: 'summarizer',
        name,
        taskTypes: ['summarize'],
        handler: summarize,
        concurrency: 1,
        spoolDir: join(o.dataDir, 'spool', name),
      }),
    );
  }
  workers.push(
    new Worker({
      ...common,
      agentType: 'api-caller',
      name: 'flaky-1',
      taskTypes: ['flaky'],
      handler: callUpstream,
      concurrency: 2,
      spoolDir: join(o.dataDir, 'spool', 'flaky-1'),
    }),
  );
  for (const w of workers) {
    w.on('registered', ({ agent }) => o.book.nameAgent(agent.id, agent.name));
    w.on('cancelled', ({ task }) =>
      o.book.say(
        o.book.style.dim('⊘'),
        `${o.book.agent(task.agentId)} got the cancel on its heartbeat: its AbortSignal fired, the handler stopped`,
      ),
    );
    w.on('leaseLost', ({ task, code }) =>
      o.book.say(
        o.book.style.yellow('!'),
        `${o.book.agent(task.agentId)} lost its lease on ${o.book.task(task)} (${code}): handler aborted`,
      ),
    );
  }
  return workers;
}
