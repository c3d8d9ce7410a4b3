// A task worker: it claims `summarize` tasks ({"text": "...", "chunkSize": 40}), summarizes the text
// chunk by chunk, and shows what the SDK does for a handler: progress, a checkpoint after every chunk
// (a retried attempt resumes where the last one stopped), logs, a dependency report around the call
// to the summarizer, and a wake from the watchdog handled at a safe point.
//
//   node examples/worker.mjs                  run until SIGTERM / Ctrl-C (then finish or requeue, leave)
//   node examples/worker.mjs --max-tasks 3    stop after three tasks (also EXAMPLE_MAX_TASKS)
//
// With SUMMARIZER_URL set, each chunk is POSTed there (a real service: 429s and 5xx are reported as
// the dependency being rate-limited or down); otherwise a local function stands in for it.
import { setTimeout as sleep } from 'node:timers/promises';
import { NonRetryableError, Worker } from '@rouse/sdk';
import { agentToken, logger, option, print, url } from './shared.mjs';

const maxTasks = Number(option('max-tasks', 'EXAMPLE_MAX_TASKS') ?? Number.POSITIVE_INFINITY);
const summarizerUrl = process.env.SUMMARIZER_URL;

/** The external service. Its failures are thrown as they come; withDependency classifies them. */
async function summarize(chunk, signal) {
  if (!summarizerUrl) {
    await sleep(50, undefined, { signal });
    return chunk.split(/\s+/).slice(0, 4).join(' ');
  }
  const res = await fetch(summarizerUrl, { method: 'POST', body: chunk, signal });
  if (!res.ok) {
    // status and headers on the error: withDependency reads a 429's Retry-After, a 5xx as down
    throw Object.assign(new Error(`summarizer answered ${res.status}`), {
      status: res.status,
      headers: res.headers,
    });
  }
  return res.text();
}

const worker = new Worker({
  url,
  token: agentToken(),
  agentType: 'example-worker',
  taskTypes: ['summarize'],
  concurrency: 2,
  requires: ['summarizer'],
  logger,
  handler: async (task, ctx) => {
    const { text, chunkSize = 40 } = task.payload ?? {};
    if (typeof text !== 'string' || text === '') {
      throw new NonRetryableError('payload.text must be a non-empty string', { code: 'bad_payload' });
    }
    const chunks = [];
    for (let i = 0; i < text.length; i += chunkSize) chunks.push(text.slice(i, i + chunkSize));
    // a retried attempt starts after the last chunk the previous one saved
    const saved = ctx.checkpointState ?? { done: 0, summaries: [] };
    const summaries = [...saved.summaries];
    if (saved.done > 0) ctx.log(`resuming after chunk ${saved.done} of ${chunks.length}`);
    for (let i = saved.done; i < chunks.length; i++) {
      if (await ctx.safePoint()) ctx.log('woken by the watchdog: carrying on from a clean state');
      ctx.log(`chunk ${i + 1}/${chunks.length}`);
      summaries.push(await ctx.withDependency('summarizer', () => summarize(chunks[i], ctx.signal)));
      ctx.progress((i + 1) / chunks.length, `chunk ${i + 1}/${chunks.length}`); // rides on the next heartbeat
      await ctx.checkpoint({ done: i + 1, summaries });
    }
    return { summary: summaries.join(' / '), chunks: chunks.length };
  },
});

let completed = 0;
worker.on('registered', ({ agent }) =>
  print('registered', { agentId: agent.id, incarnation: agent.incarnation }),
);
worker.on('claimed', ({ task }) => print('claimed', { taskId: task.id }));
worker.on('completed', ({ task, result }) => {
  print('completed', { taskId: task.id, result });
  if (++completed >= maxTasks) void worker.stop();
});
worker.on('failed', ({ task, error }) => print('failed', { taskId: task.id, code: error.code }));
worker.on('cancelled', ({ task, reason }) => print('cancelled', { taskId: task.id, reason }));
worker.on('leaseLost', ({ task, code }) => print('leaseLost', { taskId: task.id, code }));
worker.on('stopped', () => print('stopped'));

await worker.start(); // waits (up to a minute) for a coordinator that is still starting
// SIGTERM / Ctrl-C: the worker stops claiming, lets running tasks finish (10 s), leaves; then node exits.
