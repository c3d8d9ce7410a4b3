/**
 * `rouse demo --act watchdog`: an in-process coordinator with a policy file (a recovery ladder per
 * agent type, alerts to a webhook the demo serves itself), `rouse supervise` as a child process
 * running four agent programs that stall, hang, leak and hit a rate-limited API, and a live narrative
 * of the watchdog recovering them — then the interventions and alerts, and a clean stop. Exits 0 by itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Alert, Intervention } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { pino } from 'pino';
import { startRouseServer } from '../../server.js';
import { type CliContext, EXIT } from '../context.js';
import { DemoBook } from '../demo/book.js';
import { WatchdogNarrator } from '../demo/watchdog-narrator.js';
import { type DemoReceiver, startDemoReceiver } from '../demo/watchdog-receiver.js';
import {
  rouseBin,
  WATCHDOG_AGENTS,
  WATCHDOG_TIMING,
  watchdogHostConfig,
  watchdogPolicies,
} from '../demo/watchdog-scenario.js';
import {
  type AgentEvent,
  printAlerts,
  printInterventions,
  tailAgentEvents,
  tellAgentEvent,
  tellDelivery,
  tellSupervisorLine,
} from '../demo/watchdog-story.js';
import { formatDuration } from '../format/time.js';
import { sleep } from '../sleep.js';

export interface WatchdogDemoOptions {
  duration: number;
  dataDir?: string;
  json?: boolean;
}

/** The longest the outage of llm-api lasts if the act does not see the held restart and the alert first. */
const MAX_OUTAGE_MS = 20_000;

export async function watchdogDemo(ctx: CliContext, opts: WatchdogDemoOptions): Promise<number> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = ownDir
    ? await mkdtemp(join(tmpdir(), 'rouse-demo-'))
    : resolve(ctx.deps.cwd, opts.dataDir as string);
  const book = new DemoBook(ctx, Boolean(opts.json));
  const s = book.style;
  const run = new AbortController();
  const stream = new AbortController();
  const interrupt = ctx.untilInterrupted();
  let interrupted = false;
  void interrupt.done.then(() => {
    interrupted = true;
    run.abort();
  });
  const deadline = setTimeout(() => run.abort(), opts.duration);

  const policiesFile = join(dataDir, 'policies.yaml');
  const hostFile = join(dataDir, 'host.yaml');
  const eventsFile = join(dataDir, 'agent-events.jsonl');
  let server: Awaited<ReturnType<typeof startRouseServer>> | undefined;
  let supervisor: ChildProcess | undefined;
  let supervisorExited: Promise<void> = Promise.resolve();
  let narrator: WatchdogNarrator | undefined;
  const agentEvents: AgentEvent[] = [];
  let stopTail = (): void => {};
  let receiver: DemoReceiver | undefined;
  let exitCode: number = EXIT.ok;
  try {
    receiver = await startDemoReceiver((d) => tellDelivery(book, d));
    await mkdir(dataDir, { recursive: true });
    await writeFile(policiesFile, watchdogPolicies(receiver.webhookUrl));
    await writeFile(eventsFile, '');
    await writeFile(
      hostFile,
      watchdogHostConfig({ node: process.execPath, eventsFile, llmApiUrl: receiver.llmApiUrl }),
    );
    const rx = receiver;
    server = await startRouseServer({
      port: 0,
      host: '127.0.0.1',
      dataDir,
      logger: pino({ level: 'silent' }),
      policiesFile,
    });
    const admin = new Client({ url: server.url, token: server.adminToken });
    const t = WATCHDOG_TIMING;
    // First, so a newcomer can open it and watch the demo happen in the browser.
    const login = await server.coordinator.dashboard.mintLoginCode('admin');
    book.print(
      `${s.bold('Dashboard')}: ${server.url}/login?once=${login.code}  ${s.dim('(open it to watch in your browser; one use)')}`,
    );
    book.print(`${s.bold('Rouse demo — the watchdog')}: coordinator on ${server.url} (data in ${dataDir})`);
    book.print(
      s.dim(
        `policies: ${policiesFile}; heartbeat every ${formatDuration(t.heartbeatMs)} (lost after ×${t.timeoutFactor}), stalled after ${formatDuration(t.stallThresholdMs)}; alerts go to ${rx.webhookUrl}; Ctrl-C stops`,
      ),
    );
    book.print(s.dim(`rouse supervise -c ${hostFile} runs four agents:`));
    for (const a of WATCHDOG_AGENTS) book.print(s.dim(`  ${`${a.program}-1`.padEnd(11)} ${a.story}`));
    book.print('');

    narrator = new WatchdogNarrator(book, admin);
    narrator.start(stream.signal);
    await sleep(300, run.signal);

    stopTail = tailAgentEvents(eventsFile, (e) => {
      agentEvents.push(e);
      tellAgentEvent(book, e);
    });
    const sup = spawn(process.execPath, [rouseBin(), 'supervise', '-c', hostFile, '--json'], {
      cwd: dataDir,
      env: {
        ...withoutRouse(ctx.env),
        ROUSE_URL: server.url,
        ROUSE_AGENT_TOKEN: server.agentToken,
        // If the demo is killed outright, the supervisor stops its agents and exits too.
        ROUSE_EXIT_WITH_PARENT: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    supervisor = sup;
    supervisorExited = new Promise((done) => sup.once('exit', () => done()));
    const supErr: string[] = [];
    sup.stderr?.on('data', (d: Buffer) => supErr.push(d.toString('utf8')));
    if (sup.stdout) {
      createInterface({ input: sup.stdout }).on('line', (line) => tellSupervisorLine(book, line));
    }
    let stopping = false;
    void supervisorExited.then(() => {
      if (!stopping && !run.signal.aborted) {
        book.say(s.red('!'), `the supervisor exited early: ${supErr.join('').trim() || 'no message'}`);
        run.abort();
      }
    });
    book.say(s.cyan('▸'), `started ${s.bold('rouse supervise')} (pid ${sup.pid})`);

    // The act: llm-api starts answering 429 once api-user is under way, and is back once the
    // watchdog has held api-user's restart and delivered the outage's alert.
    let outageFrom: number | null = null;
    let outageOver = false;
    let interventions: Intervention[] = [];
    const has = (agent: string, pred: (i: Intervention) => boolean) =>
      interventions.some((i) => book.agent(i.agentId) === agent && pred(i));
    const told = (agent: string, event: string) =>
      agentEvents.some((e) => e.agent === agent && e.event === event);
    /** The agent said `second` after it said `first`. */
    const toldAfter = (agent: string, first: string, second: string) => {
      const own = agentEvents.filter((e) => e.agent === agent);
      const i = own.findIndex((e) => e.event === first);
      return i >= 0 && own.slice(i).some((e) => e.event === second);
    };
    const outageAlert = () =>
      rx.deliveries.some((d) => d.kind === 'firing' && d.alert.group.condition === 'dependency_down');
    let finished = false;
    while (!run.signal.aborted) {
      interventions = (await admin.listInterventions({ limit: 200 })).interventions;
      const now = ctx.now();
      if (outageFrom === null && agentEvents.some((e) => e.agent === 'api-user-1' && e.event === 'started')) {
        if (told('staller-1', 'stuck') || told('hanger-1', 'freezing')) {
          outageFrom = now;
          rx.rateLimited = true;
          book.say(
            s.yellow('⚡'),
            `llm-api starts answering ${s.bold('429 Too Many Requests')} (Retry-After: 2)`,
          );
        }
      } else if (outageFrom !== null && !outageOver) {
        const held = has(
          'api-user-1',
          (i) => i.action === 'snapshot_and_restart' && i.evidence.heldFor !== undefined,
        );
        if ((held && outageAlert()) || now - outageFrom > MAX_OUTAGE_MS) {
          await sleep(1500, run.signal).catch(() => {});
          if (run.signal.aborted) break;
          outageOver = true;
          rx.rateLimited = false;
          book.say(s.green('☀'), 'llm-api answers again');
        }
      }
      const ended = (i: Intervention) => i.state !== 'pending' && i.state !== 'held';
      const done =
        has('staller-1', (i) => i.action === 'send_signal' && i.state === 'succeeded') &&
        has('hanger-1', (i) => i.action === 'snapshot_and_restart' && i.state === 'succeeded') &&
        toldAfter('hanger-1', 'freezing', 'resumed') &&
        has('leaker-1', (i) => i.action === 'terminate' && ended(i)) &&
        outageOver &&
        told('api-user-1', 'recovered') &&
        !has('api-user-1', (i) => !ended(i));
      if (done) {
        finished = true;
        break;
      }
      await sleep(500, run.signal).catch(() => {});
    }
    if (finished) {
      // Give the outage's "resolved" notification a moment to arrive.
      for (let n = 0; n < 10; n++) {
        if (rx.deliveries.some((d) => d.kind === 'resolved')) break;
        await sleep(300).catch(() => {});
      }
      await sleep(300);
    }
    const timedOut = !finished && !interrupted;
    if (timedOut) book.say(s.yellow('⌛'), `--duration ${formatDuration(opts.duration)} reached; stopping`);
    if (interrupted) book.say(s.yellow('⏹'), 'interrupted; stopping');

    interventions = (await admin.listInterventions({ limit: 200 })).interventions.slice().reverse();
    const alerts: Alert[] = (await admin.listAlerts({ limit: 100 })).alerts.slice().reverse();
    stream.abort();
    await narrator.stopped();
    stopping = true;
    book.say(s.dim('⏹'), 'stopping the supervisor (SIGTERM) and its agents');
    await stopSupervisor(sup, supervisorExited);

    printInterventions(book, interventions);
    printAlerts(book, alerts, rx.deliveries);
    if (opts.json) {
      ctx.printJson({
        agents: [...book.agentNames.entries()].map(([id, name]) => ({ name, id })),
        interventions: interventions.map((i) => ({ agent: book.agent(i.agentId), intervention: i })),
        alerts,
        deliveries: rx.deliveries.map((d) => ({
          kind: d.kind,
          condition: d.alert.group.condition,
          agentType: d.alert.group.agentType,
          severity: d.alert.severity,
          title: d.title,
        })),
        agentEvents,
        finished,
      });
    }
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
    stream.abort();
    await narrator?.stopped();
    if (supervisor) await stopSupervisor(supervisor, supervisorExited);
    stopTail();
    // A frozen agent the supervisor could not reach (it was killed): nothing of ours may linger.
    for (const pid of new Set(agentEvents.map((e) => e.pid))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await server?.close();
    await receiver?.close();
    if (ownDir) await rm(dataDir, { recursive: true, force: true });
  }
  return exitCode;
}

/** SIGTERM, then SIGKILL if it has not exited within 15 s. */
async function stopSupervisor(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killed = await Promise.race([exited.then(() => false), sleep(15_000).then(() => true)]);
  if (killed) {
    child.kill('SIGKILL');
    await exited;
  }
}

function withoutRouse(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('ROUSE_')) out[k] = v;
  return out;
}
