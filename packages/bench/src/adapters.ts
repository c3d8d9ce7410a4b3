/**
 * Adapters: what `rouse agent --adapter codex` costs on top of the Codex CLI it runs. The pinned
 * `codex exec` answers a one-line prompt from a fake Responses API on loopback (`fake-openai.ts`),
 * bare (spawned here, as the flavor plans it: the same config, the same arguments) and as Rouse tasks
 * through one `rouse agent` and a coordinator, one of each in turn (the machine's load moves both): wall time per task (submit → completed,
 * polled every 10 ms, vs spawn → exit) and CPU per task (the adapter process itself; the CLI's own,
 * bare and under the adapter). Then a hung turn: the fake hangs, the task's stall timeout runs out,
 * the ladder's `wake` interrupts the CLI and resumes the thread: from the wake to the resumed request
 * reaching the fake.
 *
 * The CLI is `ROUSE_CODEX_BIN`, which `npm run bench` (scripts/bench.mjs) sets to the one the tests pin
 * (test/harness/agent-clis.mjs), installing it first when it is missing; the workload fails, naming
 * the cause, when it is not there.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codexFlavor } from '@rouse/agent-host';
import type { Intervention, InterventionsResponse, Task } from '@rouse/protocol';
import { type CoordinatorProcess, ROUSE_BIN, startCoordinator } from './coordinator-process.js';
import { type BenchFakeOpenAI, startBenchFakeOpenAI } from './fake-openai.js';
import { HttpClient } from './http-client.js';
import { cpuTimesMs } from './proc.js';
import { round, summarize } from './stats.js';
import type { Metric, WorkloadContext, WorkloadResult } from './workload.js';

const POLICY = `
policies:
  - name: bench-coding-agents
    agent_type: "*"
    heartbeat: { expected_interval: 500ms, timeout_factor: 4 }
    recovery_actions:
      - { action: wake, on_condition: stall_detected, timeout: 30s }
`;
const TIMING = { heartbeatIntervalMs: 500, timeoutFactor: 4 };

export function codexBin(env: NodeJS.ProcessEnv = process.env): string {
  const bin = env.ROUSE_CODEX_BIN;
  if (!bin)
    throw new Error(
      'ROUSE_CODEX_BIN is not set: run the bench with `npm run bench` (it installs the pinned Codex CLI and sets it) or set it',
    );
  if (!existsSync(bin)) throw new Error(`the Codex CLI is not at ${bin} (ROUSE_CODEX_BIN)`);
  return bin;
}

export async function adapters(ctx: WorkloadContext): Promise<WorkloadResult> {
  const runs = ctx.quick ? 3 : 10;
  const hangs = ctx.quick ? 1 : 3;
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = { runs, hungTurns: hangs };
  const result: WorkloadResult = { workload: 'adapters', store: ctx.store.name, metrics, details };
  const bin = codexBin();
  const fake = await startBenchFakeOpenAI();
  const scratch = mkdtempSync(join(tmpdir(), 'rouse-bench-codex-'));
  let coord: CoordinatorProcess | null = null;
  let agent: ReturnType<typeof spawn> | null = null;
  try {
    coord = await startCoordinator({ store: ctx.store, dataFiles: { 'policies.yaml': POLICY } });
    const admin = new HttpClient({ url: coord.url, token: coord.adminToken, maxSockets: 2 });
    agent = spawn(
      process.execPath,
      [
        ROUSE_BIN,
        'agent',
        '--adapter',
        'codex',
        '--url',
        coord.url,
        '--types',
        'codex',
        '--bin',
        bin,
        '--work-dir',
        join(scratch, 'agent'),
        '--cli-env',
        `OPENAI_BASE_URL=${fake.baseUrl}`,
        '--cli-env',
        'OPENAI_API_KEY=sk-bench',
        '--cli-env',
        `HOME=${join(scratch, 'home')}`,
      ],
      { env: { ...process.env, ROUSE_AGENT_TOKEN: coord.agentToken }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const agentPid = agent.pid!;
    ctx.log(`adapters: ${runs} bare codex exec runs and ${runs} tasks through rouse agent, alternated`);
    await runTask(admin, { prompt: 'warm up' }); // registration, first claim, home prepared
    await bareRun(bin, fake, scratch, -1);
    const before = cpuTimesMs(agentPid);
    const selfBefore = cpuTimesMs('self');
    const bareWalls: number[] = [];
    const walls: number[] = [];
    const claims: number[] = [];
    const held: number[] = [];
    for (let i = 0; i < runs; i++) {
      bareWalls.push(await bareRun(bin, fake, scratch, i));
      const { task, wallMs } = await runTask(admin, { prompt: `say ok ${i}` });
      walls.push(wallMs);
      if (task.claimedAt !== null) claims.push(task.claimedAt - task.createdAt);
      if (task.claimedAt !== null && task.finishedAt !== null) held.push(task.finishedAt - task.claimedAt);
    }
    // The bare CLIs are this process's children (waited for); the adapter's are the agent's.
    const selfAfter = cpuTimesMs('self');
    const bare = {
      walls: bareWalls,
      cpuMsPerRun: selfBefore && selfAfter ? (selfAfter.childrenMs - selfBefore.childrenMs) / runs : null,
    };
    const after = cpuTimesMs(agentPid);

    ctx.log(`adapters: ${hangs} hung turns, woken and resumed`);
    const wakes: number[] = [];
    const detections: number[] = [];
    for (let i = 0; i < hangs; i++) {
      const sent = fake.requests.length;
      fake.hangNext(1);
      const { task } = await runTask(admin, { prompt: `hang ${i}` }, { ...TIMING, stallTimeoutMs: 2000 });
      const list = await admin.get<InterventionsResponse>(`/v1/interventions?taskId=${task.id}`);
      const wake = (list.interventions as Intervention[]).find((x) => x.action === 'wake');
      const resumed = fake.requests.slice(sent).find((r) => r.texts.some((t) => /interrupted/i.test(t)));
      const hung = fake.requests[sent];
      if (wake && hung) detections.push(wake.startedAt - hung.at);
      if (wake && resumed) wakes.push(resumed.at - wake.startedAt);
    }

    const b = summarize(bare.walls);
    const a = summarize(walls);
    const adapterCpu = before && after ? (after.ownMs - before.ownMs) / runs : null;
    const cliCpu = before && after ? (after.childrenMs - before.childrenMs) / runs : null;
    Object.assign(details, {
      bareWallMs: b,
      adapterWallMs: a,
      createdToClaimedMs: summarize(claims),
      claimedToFinishedMs: summarize(held),
      bareCliCpuMsPerRun: round(bare.cpuMsPerRun ?? Number.NaN, 1),
      adapterOwnCpuMsPerTask: adapterCpu === null ? null : round(adapterCpu, 1),
      cliCpuMsPerTaskUnderAdapter: cliCpu === null ? null : round(cliCpu, 1),
      hungRequestToWakeMs: detections,
      wakeToResumedRequestMs: wakes,
    });
    const p50 = (xs: number[]) => (xs.length ? summarize(xs).p50 : null);
    const m = (metric: string, value: number | null, unit: string): void => {
      metrics.push({ workload: 'adapters', metric, value: value === null ? null : round(value, 1), unit });
    };
    m('bare codex exec, spawn → exit (p50)', b.p50, 'ms');
    m('codex task through rouse agent, submit → completed (p50)', a.p50, 'ms');
    m(
      'adapter overhead per task (p50 of the paired differences)',
      p50(walls.map((w, i) => w - bare.walls[i]!)),
      'ms',
    );
    m('  of which: created → claimed (p50)', summarize(claims).p50, 'ms');
    m('  the agent holding it: claimed → finished (p50)', summarize(held).p50, 'ms');
    m('CLI CPU per run, bare', bare.cpuMsPerRun, 'ms');
    m('CLI CPU per task, under the adapter', cliCpu, 'ms');
    m('adapter process CPU per task', adapterCpu, 'ms');
    m('hung turn: the request hangs → the wake is sent (stall timeout 2 s; p50)', p50(detections), 'ms');
    m('hung turn: the wake is sent → the resumed request reaches the model (p50)', p50(wakes), 'ms');
    return result;
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    return result;
  } finally {
    if (agent && agent.exitCode === null) {
      const exited = new Promise((r) => agent!.once('exit', r));
      agent.kill('SIGTERM');
      const t = setTimeout(() => agent?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    await coord?.stop();
    await fake.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One bare run of the CLI as the flavor plans it (the same config and arguments); its wall time. */
async function bareRun(bin: string, fake: BenchFakeOpenAI, scratch: string, i: number): Promise<number> {
  const plan = {
    prompt: `say ok ${i}`,
    cwd: mkdtempSync(join(scratch, 'cwd-')),
    home: join(scratch, 'bare-home'),
    model: null,
    resumeSessionId: null,
    newSessionId: null,
    maxTurns: null,
    maxBudgetUsd: null,
    extraArgs: [],
    extraEnv: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-bench', HOME: join(scratch, 'home') },
  };
  await codexFlavor.prepareHome(plan);
  const { args, env } = codexFlavor.command(plan);
  const t = performance.now();
  const child = spawn(bin, args, { cwd: plan.cwd, env: { ...process.env, ...env }, stdio: 'ignore' });
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`bare codex exec exited with ${code}`);
  return performance.now() - t;
}

/** Submit a codex task and poll it every 10 ms until it is final; it must complete. */
async function runTask(
  admin: HttpClient,
  payload: Record<string, unknown>,
  timing: Record<string, number> = TIMING,
): Promise<{ task: Task; wallMs: number }> {
  const t = performance.now();
  const { task } = await admin.post<{ task: Task }>('/v1/tasks', { type: 'codex', payload, timing });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { task: now } = await admin.get<{ task: Task }>(`/v1/tasks/${task.id}`);
    if (now.final) {
      if (now.status !== 'completed')
        throw new Error(`task ${task.id} ended ${now.status}: ${now.error?.message}`);
      return { task: now, wallMs: performance.now() - t };
    }
    if (Date.now() > deadline) throw new Error(`task ${task.id} not final after 120 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
