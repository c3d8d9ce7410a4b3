/** `rouse submit <type> [payload]`: create a task, optionally wait until it is final. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CreateTaskRequest, Json, Task, TaskEvent, TimingInput } from '@rouse/protocol';
import type { Client } from '@rouse/sdk';
import { createClient } from '../connection.js';
import { type CliContext, CliError, EXIT } from '../context.js';
import { followUntilInterrupted } from '../follow.js';
import { createStyle } from '../format/style.js';
import { actorLabel, compactJson, formatAttempts } from '../format/task.js';
import { formatClock, formatDuration } from '../format/time.js';
import { parseRunAt } from '../parse.js';
import { sleep } from '../sleep.js';

export interface SubmitOptions {
  payloadFile?: string;
  idempotencyKey?: string;
  priority?: number;
  runAt?: string;
  maxAttempts?: number;
  resumable?: boolean;
  requires?: string[];
  label?: Record<string, string>;
  heartbeatInterval?: number;
  expectedDuration?: { min: number; max: number };
  executionTimeout?: number;
  wait?: boolean;
  json?: boolean;
  url?: string;
  token?: string;
  dataDir?: string;
}

function readPayload(
  ctx: CliContext,
  payload: string | undefined,
  file: string | undefined,
): Json | undefined {
  if (payload !== undefined && file !== undefined) {
    throw new CliError('give the payload either as an argument or with --payload-file, not both', EXIT.usage);
  }
  let text = payload;
  let where = 'payload argument';
  if (file !== undefined) {
    where = file === '-' ? 'stdin' : file;
    try {
      text = readFileSync(file === '-' ? 0 : resolve(ctx.deps.cwd, file), 'utf8');
    } catch (err) {
      throw new CliError(`cannot read --payload-file ${file}: ${(err as Error).message}`, EXIT.usage);
    }
  }
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new CliError(`the ${where} is not valid JSON: ${(err as Error).message}`, EXIT.usage);
  }
}

export function buildCreateRequest(
  ctx: CliContext,
  type: string,
  payload: Json | undefined,
  opts: SubmitOptions,
): CreateTaskRequest {
  const req: CreateTaskRequest = { type };
  if (payload !== undefined) req.payload = payload;
  if (opts.idempotencyKey !== undefined) req.idempotencyKey = opts.idempotencyKey;
  if (opts.priority !== undefined) req.priority = opts.priority;
  if (opts.runAt !== undefined) {
    try {
      req.runAt = parseRunAt(opts.runAt, ctx.now());
    } catch (err) {
      throw new CliError(`--run-at: ${(err as Error).message}`, EXIT.usage);
    }
  }
  if (opts.maxAttempts !== undefined) req.maxAttempts = opts.maxAttempts;
  if (opts.resumable) req.resumable = true;
  if (opts.requires) req.requires = opts.requires;
  if (opts.label) req.labels = opts.label;
  const timing: TimingInput = {};
  if (opts.heartbeatInterval !== undefined) timing.heartbeatIntervalMs = opts.heartbeatInterval;
  if (opts.expectedDuration !== undefined) timing.expectedDurationMs = opts.expectedDuration;
  if (opts.executionTimeout !== undefined) timing.executionTimeoutMs = opts.executionTimeout;
  if (Object.keys(timing).length > 0) req.timing = timing;
  return req;
}

export async function submit(
  ctx: CliContext,
  type: string,
  payloadArg: string | undefined,
  opts: SubmitOptions,
) {
  const payload = readPayload(ctx, payloadArg, opts.payloadFile);
  const req = buildCreateRequest(ctx, type, payload, opts);
  const { client } = createClient(ctx, opts);
  const created = await client.createTask(req);
  const task = created.task;
  const style = createStyle(ctx.io.color);
  if (!opts.wait) {
    if (opts.json) {
      ctx.printJson({ task, deduplicated: created.deduplicated });
      return EXIT.ok;
    }
    ctx.print(
      created.deduplicated
        ? `${style.yellow('deduplicated')}: ${task.id} already exists for this idempotency key (status ${style.status(task.status)})`
        : `created ${style.bold(task.id)} (${task.type}, ${style.status(task.status)})`,
    );
    ctx.print(style.dim(`  rouse show ${task.id}   rouse why ${task.id}   rouse logs -f ${task.id}`));
    return EXIT.ok;
  }
  if (!opts.json) {
    ctx.print(
      `${created.deduplicated ? 'deduplicated' : 'created'} ${style.bold(task.id)} (${task.type}); waiting until it is final (Ctrl-C stops waiting)`,
    );
  }
  const final = await waitForFinal(ctx, client, task.id, opts.json ? null : (line) => ctx.print(line));
  if (!final) {
    if (!opts.json) ctx.warn(`stopped waiting; the task goes on: rouse show ${task.id}`);
    return EXIT.error;
  }
  if (opts.json) {
    ctx.printJson({ task: final, deduplicated: created.deduplicated });
  } else if (final.status === 'completed') {
    const took =
      final.finishedAt && final.createdAt ? ` in ${formatDuration(final.finishedAt - final.createdAt)}` : '';
    ctx.print(`${style.green('completed')}${took}, attempt ${formatAttempts(final)}`);
    if (final.result !== null) ctx.print(`result: ${compactJson(final.result, 400)}`);
    if (final.resultRef)
      ctx.print(
        `result: ${final.resultRef.sizeBytes} bytes (${final.resultRef.contentType}) stored as a blob`,
      );
  } else {
    const err = final.error ? `: ${final.error.message} (${final.error.code})` : '';
    ctx.print(`${style.status(final.status)} (final) after ${final.attempt} attempt(s)${err}`);
    ctx.print(style.dim(`  rouse why ${final.id}`));
  }
  return final.status === 'completed' ? EXIT.ok : EXIT.error;
}

/** Print one transition of the event history. */
export function describeEvent(ev: TaskEvent, style = createStyle(false)): string {
  const from = ev.from ?? '∅';
  const who = actorLabel(ev.actor);
  const reason = ev.reason ? `  ${ev.reason}` : '';
  const next =
    ev.details && typeof ev.details.nextAttemptAt === 'number'
      ? ` (retry at ${formatClock(ev.details.nextAttemptAt)})`
      : '';
  return `${formatClock(ev.at)}  ${from} → ${style.status(ev.to)}  attempt ${ev.attempt}  v${ev.version}  ${who}${reason}${next}`;
}

/**
 * Poll the task's event history until the task is final, printing each new transition. Polling keeps
 * it simple and free of races with the event stream. A coordinator that goes away (restarts) is
 * waited for, and the history picks up where it was. Returns null if interrupted.
 */
export async function waitForFinal(
  ctx: CliContext,
  client: Client,
  id: string,
  onLine: ((line: string) => void) | null,
  pollMs = 250,
): Promise<Task | null> {
  const style = createStyle(ctx.io.color);
  let lastSeq = 0;
  const printNew = (events: TaskEvent[]): void => {
    for (const ev of events) {
      if (ev.seq <= lastSeq) continue;
      lastSeq = ev.seq;
      onLine?.(describeEvent(ev, style));
    }
  };
  let final: Task | null = null;
  await followUntilInterrupted(ctx, async (signal, connected) => {
    while (!signal.aborted) {
      printNew(await client.getTaskEvents(id));
      connected();
      const task = await client.getTask(id);
      if (task.final) {
        // print transitions that landed between the two reads
        printNew(await client.getTaskEvents(id));
        final = task;
        return 'done';
      }
      await sleep(pollMs, signal);
    }
    return 'done';
  });
  return final;
}
