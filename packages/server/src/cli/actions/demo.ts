/**
 * `rouse demo`: an in-process coordinator on an ephemeral port, a small fleet of agents (healthy ones
 * and ones that crash, hang, fail or lose their write-back), ~20 tasks, and a live narrative from the
 * event stream — then `rouse why`-style diagnoses and a summary. Exits 0 by itself.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Task } from '@rouse/protocol';
import { Client, type Worker } from '@rouse/sdk';
import { pino } from 'pino';
import { startRouseServer } from '../../server.js';
import { type CliContext, EXIT } from '../context.js';
import { DemoBook } from '../demo/book.js';
import { createFleet } from '../demo/fleet.js';
import { claimOne, registerRawAgent, runCrashy, runHangy, runLossy } from '../demo/misbehaving-agents.js';
import { Narrator } from '../demo/narrator.js';
import { printDiagnoses, printHistory, printSummary } from '../demo/report.js';
import { type DemoTask, demoTiming, otherTasks, victimTasks } from '../demo/scenario.js';
import { formatDuration } from '../format/time.js';
import { sleep } from '../sleep.js';

export interface DemoOptions {
  /** `tasks` (the default) or `watchdog`. */
  act: 'tasks' | 'watchdog';
  /** Stop after this long at most. @default 60 s for tasks, 90 s for the watchdog */
  duration?: number;
  dataDir?: string;
  healthy: number;
  heartbeatInterval: number;
  json?: boolean;
}

/** Long enough to outlast a heartbeat timeout clearly (so the grace is visible), at least 3 s. */
const writeBackGraceFor = (heartbeatIntervalMs: number) => Math.max(3000, heartbeatIntervalMs * 6);

export async function demo(ctx: CliContext, opts: DemoOptions): Promise<number> {
  if (opts.act === 'watchdog') {
    const { watchdogDemo } = await import('./demo-watchdog.js');
    return watchdogDemo(ctx, {
      duration: opts.duration ?? 90_000,
      ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
      ...(opts.json ? { json: true } : {}),
    });
  }
  return tasksDemo(ctx, { ...opts, duration: opts.duration ?? 60_000 });
}

/** The `tasks` act: tasks failing every way a task can, and recovering. */
async function tasksDemo(ctx: CliContext, opts: DemoOptions & { duration: number }): Promise<number> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = ownDir
    ? await mkdtemp(join(tmpdir(), 'rouse-demo-'))
    : resolve(ctx.deps.cwd, opts.dataDir as string);
  const book = new DemoBook(ctx, Boolean(opts.json));
  const s = book.style;
  const run = new AbortController(); // the agents' activity
  const stream = new AbortController(); // the narrator
  const interrupt = ctx.untilInterrupted();
  let interrupted = false;
  void interrupt.done.then(() => {
    interrupted = true;
    run.abort();
  });
  const deadline = setTimeout(() => run.abort(), opts.duration);

  const writeBackGraceMs = writeBackGraceFor(opts.heartbeatInterval);
  const server = await startRouseServer({
    port: 0,
    host: '127.0.0.1',
    dataDir,
    logger: pino({ level: 'silent' }),
    writeBackGraceMs,
  });
  const workers: Worker[] = [];
  let exitCode: number = EXIT.ok;
  let fenced = 0;
  let narrator: Narrator | undefined;
  try {
    const admin = new Client({ url: server.url, token: server.adminToken });
    const enroll = new Client({ url: server.url, token: server.agentToken });
    const timing = demoTiming(opts.heartbeatInterval);
    // First, so a newcomer can open it and watch the demo happen in the browser.
    const login = await server.coordinator.dashboard.mintLoginCode('admin');
    book.print(
      `${s.bold('Dashboard')}: ${server.url}/login?once=${login.code}  ${s.dim('(open it to watch in your browser; one use)')}`,
    );
    book.print(`${s.bold('Rouse demo')}: coordinator on ${server.url} (data in ${dataDir})`);
    book.print(
      s.dim(
        `heartbeat every ${formatDuration(opts.heartbeatInterval)} → timeout after ${formatDuration(opts.heartbeatInterval * 3)}; claim timeout ${formatDuration(timing.claimTimeoutMs ?? 0)}; write-back grace ${formatDuration(writeBackGraceMs)}; Ctrl-C stops`,
      ),
    );
    book.print('');

    const narrate = new Narrator(book, admin);
    narrator = narrate;
    narrate.start(stream.signal);
    const env = { book, admin, narrator: narrate, signal: run.signal };

    // Give the event stream a moment to connect (the server subscribes us once the request lands).
    await sleep(300, run.signal);
    // The misbehaving agents claim the first three tasks before anyone else polls.
    const crashy = await registerRawAgent(enroll, 'crashy-1', ['summarize']);
    book.nameAgent(crashy.agentId, crashy.name);
    if (!(await narrate.waitForAgent(crashy.agentId, 2000))) {
      book.say(s.cyan('+'), `agent ${s.bold(crashy.name)} registered for summarize`);
    }
    const hangy = await registerRawAgent(enroll, 'hangy-1', ['summarize']);
    const lossy = await registerRawAgent(enroll, 'lossy-1', ['summarize']);
    book.nameAgent(hangy.agentId, hangy.name);
    book.nameAgent(lossy.agentId, lossy.name);
    const all: DemoTask[] = [];
    const ids = new Map<string, string>(); // name → id
    const claimed: Task[] = [];
    const victims = victimTasks(timing);
    for (const [i, agent] of [crashy, hangy, lossy].entries()) {
      const def = victims[i] as DemoTask;
      const { task } = await admin.createTask(def.req);
      book.nameTask(task.id, def.name);
      ids.set(def.name, task.id);
      all.push(def);
      claimed.push(await claimOne(agent, ['summarize']));
    }
    runCrashy(env, crashy, claimed[0] as Task);
    const hangyDone = runHangy(env, hangy, claimed[1] as Task).catch((err) => {
      book.say('!', `hangy-1: ${(err as Error).message}`);
      return { fenced: false };
    });
    const lossyDone = runLossy(env, lossy, claimed[2] as Task, writeBackGraceMs).catch((err) =>
      book.say('!', `lossy-1: ${(err as Error).message}`),
    );

    const others = otherTasks(timing, ctx.now());
    const created = await admin.createTasks(others.map((d) => d.req));
    created.forEach((t, i) => {
      const def = others[i] as DemoTask;
      book.nameTask(t.id, def.name);
      ids.set(def.name, t.id);
      all.push(def);
    });
    book.say(
      s.cyan('+'),
      `submitted ${all.length} tasks (summarize, flaky, translate; one scheduled 10 min ahead)`,
    );

    // One task gets cancelled two seconds into its run.
    const cancelId = ids.get('summarize#16');
    const offCancel = narrate.onTransition((t, ev) => {
      if (t.id !== cancelId || ev.to !== 'running') return;
      void sleep(2000, run.signal).then(async () => {
        if (run.signal.aborted) return;
        book.say(
          s.dim('⊘'),
          `you decide ${book.task(t)} is not needed after all: rouse cancel ${book.task(t)}`,
        );
        await admin.cancelTask(t.id, 'no longer needed').catch(() => {});
      });
    });

    workers.push(
      ...createFleet({
        url: server.url,
        enrollmentToken: server.agentToken,
        dataDir,
        heartbeatIntervalMs: opts.heartbeatInterval,
        healthy: opts.healthy,
        book,
      }),
    );
    await Promise.all(workers.map((w) => w.start()));

    // Run until every task meant to finish is final and the fencing scene has played (or time is up).
    const expected = new Set(all.filter((d) => d.expectFinal).map((d) => ids.get(d.name) as string));
    let fencingDone = false;
    void hangyDone.then((r) => {
      fencingDone = true;
      if (r.fenced) fenced++;
    });
    let tasks: Task[] = [];
    while (!run.signal.aborted) {
      tasks = (await admin.listTasks({ limit: 200 })).tasks;
      const pending = tasks.filter((t) => expected.has(t.id) && !t.final);
      if (pending.length === 0 && fencingDone) break;
      await sleep(500, run.signal);
    }
    offCancel();
    const timedOut = run.signal.aborted && !interrupted;
    run.abort();
    await Promise.all([hangyDone, lossyDone]);
    await Promise.all(workers.map((w) => w.stop().catch(() => {})));
    if (timedOut) book.say(s.yellow('⌛'), `--duration ${formatDuration(opts.duration)} reached; stopping`);
    if (interrupted) book.say(s.yellow('⏹'), 'interrupted; stopping');

    if (!interrupted) {
      await printDiagnoses(
        book,
        admin,
        all.filter((d) => d.explain).map((d) => ids.get(d.name) as string),
      );
      const hangyTask = claimed[1];
      if (hangyTask)
        await printHistory(
          book,
          admin,
          hangyTask.id,
          `The history of ${book.task(hangyTask)} (rouse show): every transition, who and why`,
        );
    }
    const order = [...ids.values()];
    tasks = (await admin.listTasks({ limit: 200 })).tasks.sort(
      (a, b) => order.indexOf(a.id) - order.indexOf(b.id),
    );
    printSummary(book, tasks, fenced);
    if (opts.json)
      ctx.printJson({ tasks: tasks.map((task) => ({ name: book.task(task), task })), fencedWrites: fenced });
    if (!ownDir)
      book.print(
        s.dim(`\n  the data is kept in ${dataDir}: rouse serve --data-dir ${opts.dataDir} to explore it`),
      );
  } catch (err) {
    exitCode = EXIT.error;
    throw err;
  } finally {
    clearTimeout(deadline);
    run.abort();
    interrupt.dispose();
    await Promise.all(workers.map((w) => w.stop().catch(() => {})));
    stream.abort();
    await narrator?.stopped();
    await server.close();
    if (ownDir) await rm(dataDir, { recursive: true, force: true });
  }
  return exitCode;
}
