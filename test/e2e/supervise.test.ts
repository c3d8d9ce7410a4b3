/**
 * `rouse supervise` end to end: a real coordinator, a real supervisor process, real programs and real
 * signals. A SIGSTOPped SDK child goes lost and a person's `restart` reaches its supervisor, which
 * restarts it (new pid, next incarnation of the same agent); a `terminate` kills a process group whose
 * grandchild ignores SIGTERM and leaves the last output lines with the intervention; a crash loop backs
 * off doubling, goes fatal after its budget (one `agent.fatal` event) and stops restarting; a second
 * supervisor under the same name is refused; a plain program is kept running by the supervisor's
 * heartbeat with its progress read from its output; a command is answered as soon as it is carried
 * out, not with the next heartbeat; SIGTERM stops every child.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Agent, Client, type Intervention, type StreamEvent } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CoordinatorProcess,
  ROUSE_BIN,
  startCoordinatorProcess,
} from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';

const MONITOR = fileURLToPath(new URL('../fixtures/supervised-monitor.mjs', import.meta.url));
const STUBBORN = fileURLToPath(new URL('../fixtures/stubborn-group.mjs', import.meta.url));
// Leases of 600 ms: lost quickly, without waiting on wall-clock sleeps in the tests.
const POLICY = `
policies:
  - name: fast
    agent_type: "*"
    heartbeat: { expected_interval: 200ms, timeout_factor: 3 }
`;

type Line = { event: string; key?: string; pid?: number; delayMs?: number; agentId?: string; line?: string };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A live process (not a zombie waiting for a reaper) with this pid. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function coordinator(policy = POLICY): Promise<{ coord: CoordinatorProcess; admin: Client }> {
  const coord = await startCoordinatorProcess({ extraArgs: ['--policies', writePolicyFile(policy)] });
  cleanups.push(() => coord.kill('SIGTERM'));
  return { coord, admin: new Client({ url: coord.url, token: coord.adminToken }) };
}

function supervise(coord: CoordinatorProcess, yaml: string, extraArgs: string[] = []): Spawned {
  const file = join(tempDir('rouse-host-'), 'host.yaml');
  writeFileSync(file, yaml);
  const sup = spawnNode([ROUSE_BIN, 'supervise', '-c', file, '--json', ...extraArgs], {
    ROUSE_URL: coord.url,
    ROUSE_AGENT_TOKEN: coord.agentToken,
  });
  cleanups.push(async () => {
    // Children first: a supervisor killed outright leaves them running.
    for (const line of sup.lines) {
      try {
        const e = JSON.parse(line) as Line;
        if (e.event === 'started' && e.pid !== undefined) process.kill(-e.pid, 'SIGKILL');
      } catch {
        // Not an event line, or the group is gone already.
      }
    }
    sup.kill('SIGKILL');
    await sup.exited;
  });
  return sup;
}

const events = (sup: Spawned): Line[] =>
  sup.lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Line];
    } catch {
      return [];
    }
  });

async function agentByKey(admin: Client, agentType: string, key: string): Promise<Agent> {
  return waitFor(
    async () =>
      (await admin.listAgents({ agentType })).find(
        (a) => a.key === key && a.status === 'running' && a.lastHeartbeatAt !== null,
      ),
    { what: `agent ${key} running` },
  );
}

const ended = (admin: Client, id: string): Promise<Intervention> =>
  waitFor(
    async () => {
      const i = await admin.getIntervention(id);
      return i.state === 'pending' ? null : i;
    },
    { what: `intervention ${id} to end` },
  );

describe('rouse supervise', () => {
  it('restarts a SIGSTOPped SDK child that went lost, terminates it, refuses a second supervisor of its name, and stops every child on SIGTERM', async () => {
    const { coord, admin } = await coordinator();
    const yaml = `
name: host-a
programs:
  - name: mon
    command: ["${process.execPath}", "${MONITOR}"]
    agent_type: e2e-mon
    stop: { grace: 500ms }
  - name: loop
    command: "while :; do echo hi; sleep 0.1; done"
    sdk: false
`;
    const sup = supervise(coord, yaml);
    const reg = await sup.waitForLine<Line>((e) => e.event === 'registered');
    const first = await sup.waitForLine<Line>((e) => e.event === 'started' && e.key === 'host-a/mon-1');
    const loop = await sup.waitForLine<Line>((e) => e.event === 'started' && e.key === 'host-a/loop-1');
    const agent = await agentByKey(admin, 'e2e-mon', 'host-a/mon-1');
    expect(agent).toMatchObject({ supervisorId: reg.agentId, pid: first.pid, incarnation: 1 });
    expect((await admin.getAgent(reg.agentId!)).agentType).toBe('rouse.supervisor');

    // One live supervisor per name.
    const second = supervise(coord, yaml);
    expect((await second.exited).code).toBe(1);
    expect(second.errLines.join('\n')).toContain(
      `another supervisor named host-a is running as agent ${reg.agentId}`,
    );
    // It never joined: it does not say it left.
    expect(second.lines.join('\n')).not.toContain('left the coordinator');

    // Hung: alive to the supervisor, but its own heartbeats stop and it goes lost.
    process.kill(first.pid!, 'SIGSTOP');
    await waitFor(async () => (await admin.getAgent(agent.id)).status === 'lost', {
      what: 'the stopped child to be lost',
    });
    const sent = await admin.sendCommand(agent.id, { type: 'restart', reason: 'hung' });
    const restarted = await sup.waitForLine<Line>(
      (e) => e.event === 'started' && e.key === 'host-a/mon-1' && e.pid !== first.pid,
    );
    const itv = await ended(admin, sent.intervention!.id);
    expect(itv).toMatchObject({ state: 'succeeded', action: 'snapshot_and_restart' });
    expect(itv.evidence.ack).toMatchObject({ outcome: 'done', by: 'supervisor', from: reg.agentId });
    expect(alive(first.pid!)).toBe(false); // SIGKILLed after the grace: a stopped process cannot take SIGTERM
    const after = await waitFor(
      async () => {
        const a = await admin.getAgent(agent.id);
        return a.incarnation === 2 && a.status === 'running' ? a : null;
      },
      { what: 'the next incarnation running' },
    );
    expect(after.pid).toBe(restarted.pid);

    // A healthy SDK child leaves by itself on SIGTERM; the supervisor's acknowledgement still ends
    // the intervention, with its last output.
    const terminate = await admin.sendCommand(agent.id, { type: 'terminate', reason: 'enough' });
    const gone = await ended(admin, terminate.intervention!.id);
    expect(gone).toMatchObject({
      state: 'succeeded',
      action: 'terminate',
      evidence: { ack: { by: 'supervisor' } },
    });
    expect(gone.evidence.output).toMatch(/tick \d+/);
    expect(alive(restarted.pid!)).toBe(false);
    expect((await admin.getAgent(agent.id)).status).toBe('left');

    sup.kill('SIGTERM');
    expect((await sup.exited).code).toBe(0);
    expect(alive(loop.pid!)).toBe(false);
    expect((await admin.getAgent(reg.agentId!)).status).toBe('left');
    const loopAgent = (await admin.listAgents({ agentType: 'loop' })).find((a) => a.key === 'host-a/loop-1');
    expect(loopAgent?.status).toBe('left');
    // Terminated means not started again.
    expect(events(sup).filter((e) => e.event === 'started' && e.key === 'host-a/mon-1')).toHaveLength(2);
  });

  it('heartbeats for a plain program with its progress regex, and terminate kills its whole group with the last lines as evidence', async () => {
    const { coord, admin } = await coordinator();
    const dir = tempDir('rouse-stubborn-');
    const pidFile = join(dir, 'grandchild.pid');
    const sup = supervise(
      coord,
      `
name: host-b
programs:
  - name: plain
    command: ["${process.execPath}", "${STUBBORN}"]
    env: { PID_FILE: "${pidFile}" }
    progress: { output_regex: "step (\\\\d+)/(\\\\d+)" }
    stop: { grace: 300ms }
`,
    );
    const started = await sup.waitForLine<Line>((e) => e.event === 'started' && e.key === 'host-b/plain-1');
    const agent = await agentByKey(admin, 'plain', 'host-b/plain-1');
    // Kept running by the supervisor's heartbeats well past its 600 ms lease, progress from its output.
    const later = await waitFor(
      async () => {
        const a = await admin.getAgent(agent.id);
        return a.lastHeartbeatAt !== null && a.lastHeartbeatAt > a.startedAt + 2000 ? a : null;
      },
      { what: 'heartbeats past several leases' },
    );
    expect(later.status).toBe('running');
    expect(later.conditions).toEqual([]);
    expect(later.progress).toEqual(expect.any(Number));
    expect(later.phase).toMatch(/^step \d+\/10$/);
    expect(later.metrics?.rssBytes).toBeGreaterThan(0);
    await waitFor(() => existsSync(pidFile), { what: 'the grandchild pid file' });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(grandchild)).toBe(true);

    // A wake with a signal: the supervisor sends it to the group.
    const wake = await admin.sendCommand(agent.id, { type: 'wake', signal: 'SIGUSR2' });
    expect(await ended(admin, wake.intervention!.id)).toMatchObject({
      state: 'succeeded',
      action: 'wake',
      evidence: { ack: { outcome: 'done', by: 'supervisor' } },
    });

    const sent = await admin.sendCommand(agent.id, { type: 'terminate', reason: 'enough' });
    const itv = await ended(admin, sent.intervention!.id);
    expect(itv).toMatchObject({ state: 'succeeded', action: 'terminate' });
    expect(itv.evidence.ack).toMatchObject({ outcome: 'done', by: 'supervisor' });
    expect(itv.evidence.output).toContain('got SIGTERM, leaving my grandchild behind');
    expect(itv.evidence.output).toContain('woken by SIGUSR2');
    expect(itv.evidence.output).toMatch(/step \d+\/10/);
    expect(alive(started.pid!)).toBe(false);
    expect(alive(grandchild)).toBe(false); // ignored SIGTERM: SIGKILLed with its group after the grace
    await waitFor(async () => (await admin.getAgent(agent.id)).status === 'left', {
      what: 'the terminated plain agent to leave',
    });

    sup.kill('SIGTERM');
    expect((await sup.exited).code).toBe(0);
    // Terminated means not started again.
    expect(events(sup).filter((e) => e.event === 'started' && e.key === 'host-b/plain-1')).toHaveLength(1);
  });

  it('answers a command as soon as it is carried out, without waiting for a heartbeat', async () => {
    // Heartbeats a minute apart: an answer that waited for one would not come within the test.
    const { admin, coord } = await coordinator(`
policies:
  - name: slow
    agent_type: "*"
    heartbeat: { expected_interval: 60s, timeout_factor: 3 }
`);
    const sup = supervise(
      coord,
      `name: host-ack\nprograms:\n  - name: napper\n    command: ["sleep", "1000"]\n    sdk: false\n    stop: { grace: 300ms }\n`,
    );
    const registered = await sup.waitForLine<Line>((e) => e.event === 'registered');
    const child = await waitFor(
      async () =>
        (await admin.listAgents({ agentType: 'napper' })).find((a) => a.key === 'host-ack/napper-1'),
      { what: 'the plain child registered' },
    );
    const beatBefore = await waitFor(
      async () => (await admin.getAgent(registered.agentId!)).lastHeartbeatAt,
      { what: "the supervisor's first heartbeat" },
    );
    const wake = await admin.sendCommand(child.id, { type: 'wake', signal: 'SIGCONT' });
    expect(await ended(admin, wake.intervention!.id)).toMatchObject({
      state: 'succeeded',
      evidence: { ack: { outcome: 'done', by: 'supervisor' } },
    });
    // The answer came on its own call: the supervisor has not sent a heartbeat since.
    expect((await admin.getAgent(registered.agentId!)).lastHeartbeatAt).toBe(beatBefore);
    expect(events(sup).some((e) => e.event === 'acknowledged')).toBe(true);
  });

  it('backs off a crash loop doubling, goes fatal after its budget (one agent.fatal event) and stops restarting', async () => {
    const { coord, admin } = await coordinator();
    const abort = new AbortController();
    const seen: StreamEvent[] = [];
    const stream = await admin.openEvents({ signal: abort.signal });
    const reading = (async () => {
      for await (const e of stream) seen.push(e);
    })().catch(() => undefined);
    cleanups.push(async () => {
      abort.abort();
      await reading;
    });
    const sup = supervise(
      coord,
      `
name: host-c
programs:
  - name: crasher
    command: "echo crashing now; exit 3"
    sdk: false
    restart: { backoff: 100ms, max_backoff: 1s, budget: 3, window: 1m }
`,
      ['--echo'],
    );
    const fatal = await sup.waitForLine<Line>((e) => e.event === 'fatal' && e.key === 'host-c/crasher-1');
    expect(fatal).toMatchObject({ restarts: 3 });
    const report = await waitFor(() => seen.find((e) => e.type === 'agent.fatal'), {
      what: 'the agent.fatal event',
    });
    expect(report).toMatchObject({
      type: 'agent.fatal',
      report: {
        agentKey: 'host-c/crasher-1',
        program: 'crasher',
        restarts: 3,
        lastExit: { code: 3, signal: null },
      },
    });
    expect(report.type === 'agent.fatal' && report.report.output).toContain('crashing now');
    // A person is alerted, once: one critical `fatal` alert for the program's slot.
    const fatalAlerts = await waitFor(
      async () => {
        const { alerts } = await admin.listAlerts({ states: ['firing'] });
        const found = alerts.filter((a) => a.group.condition === 'fatal');
        return found.length > 0 ? found : null;
      },
      { what: 'the fatal alert' },
    );
    expect(fatalAlerts).toHaveLength(1);
    expect(fatalAlerts[0]).toMatchObject({ severity: 'critical', agentIds: [expect.any(String)] });
    expect(fatalAlerts[0]?.summary).toContain('host-c/crasher-1');

    sup.kill('SIGTERM');
    expect((await sup.exited).code).toBe(0);
    const mine = events(sup).filter((e) => e.key === 'host-c/crasher-1');
    expect(mine.filter((e) => e.event === 'restart_scheduled').map((e) => e.delayMs)).toEqual([
      100, 200, 400,
    ]);
    // The first start and three restarts; none after fatal.
    expect(mine.filter((e) => e.event === 'started')).toHaveLength(4);
    // --echo: each line the children wrote, as an output event.
    expect(mine.filter((e) => e.event === 'output' && e.line === 'crashing now')).toHaveLength(4);
    expect(seen.filter((e) => e.type === 'agent.fatal')).toHaveLength(1);
    expect((await admin.listAlerts({})).alerts.filter((a) => a.group.condition === 'fatal')).toHaveLength(1);
  });
});

describe('rouse supervise started by another process', () => {
  it('with ROUSE_EXIT_WITH_PARENT=1, stops its children and exits when its starter is SIGKILLed', async () => {
    const { coord } = await coordinator();
    const file = join(tempDir('rouse-host-'), 'host.yaml');
    writeFileSync(
      file,
      `name: host-orphan\nprograms:\n  - name: napper\n    command: ["sleep", "1000"]\n    sdk: false\n    stop: { grace: 500ms }\n`,
    );
    // The starter: spawns the supervisor and prints its pid, then waits to be killed.
    const starter = spawnNode(
      [
        '-e',
        `const { spawn } = require('node:child_process');
         const s = spawn(process.execPath, [${JSON.stringify(ROUSE_BIN)}, 'supervise', '-c', ${JSON.stringify(file)}, '--json'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, npm_command: '', ROUSE_EXIT_WITH_PARENT: '1' } });
         s.stdout.pipe(process.stdout);
         console.log(JSON.stringify({ event: 'supervisor', pid: s.pid }));
         setInterval(() => {}, 1000);`,
      ],
      { ROUSE_URL: coord.url, ROUSE_AGENT_TOKEN: coord.agentToken },
    );
    const sup = await starter.waitForLine<Line>((e) => e.event === 'supervisor');
    const child = await starter.waitForLine<Line>(
      (e) => e.event === 'started' && e.key === 'host-orphan/napper-1',
    );
    cleanups.push(async () => {
      for (const pid of [child.pid!, sup.pid!]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    });
    starter.kill('SIGKILL');
    await starter.exited;
    await waitFor(() => !alive(sup.pid!) && !alive(child.pid!), {
      what: 'the orphaned supervisor to stop its child and exit',
      timeoutMs: 15_000,
    });
  });
});
