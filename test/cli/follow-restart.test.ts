/**
 * The CLI's following commands across a coordinator that is SIGKILLed and restarted on its address:
 * `submit --wait`, `logs -f` and `interventions -f` say once that they lost it and once that it is
 * back, then carry on from where they were — nothing printed twice, nothing missed — and end as they
 * would have (the task final; Ctrl-C). A coordinator never reached is still exit 3.
 */
import type { ChildProcess } from 'node:child_process';
import { Client } from '@rouse/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { freePort } from '../harness/ports.mjs';
import { tempDir } from '../harness/temp-dir.js';
import { waitFor } from '../harness/wait.js';
import { type RunningCli, runCli, spawnCliRunning, waitForExit } from './run-cli.js';

let coord: CoordinatorProcess | undefined;
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await coord?.kill('SIGTERM');
});

function follow(args: string[]): RunningCli {
  const running = spawnCliRunning([...args, '--url', coord!.url, '--token', coord!.adminToken], {
    cwd: tempDir('rouse-follow-'),
  });
  children.push(running.child);
  return running;
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('following across a coordinator restart', () => {
  it('submit --wait, logs -f and interventions -f carry on where they were, nothing twice', async () => {
    coord = await startCoordinatorProcess();
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const enroll = new Client({ url: coord.url, token: coord.agentToken });

    // An agent that holds a task of `logged` and writes its logs; `waited` is created by `submit --wait`.
    const reg = await enroll.registerAgent({
      agentType: 'follow',
      name: 'holder',
      taskTypes: ['logged', 'waited'],
    });
    const agent = enroll.withToken(reg.token);
    const agentId = reg.agent.id;
    const { task: logged } = await admin.createTask({ type: 'logged' });
    const [held] = (await agent.claim(agentId, { types: ['logged'], max: 1 })).tasks;
    expect(held?.id).toBe(logged.id);
    await agent.startTask(logged.id, held!.version);
    await agent.appendLogs(logged.id, { version: held!.version, lines: [{ text: 'before the restart' }] });

    const waiting = follow(['submit', 'waited', '{"n": 1}', '--wait']);
    const logs = follow(['logs', '-f', logged.id]);
    const interventions = follow(['interventions', '-f']);
    await waitFor(() => waiting.out().includes('waiting until it is final'), {
      what: 'submit --wait to start',
    });
    await waitFor(() => logs.out().includes('before the restart'), {
      what: 'logs -f to print the first line',
    });
    await waitFor(() => interventions.err().includes('(following interventions'), {
      what: 'interventions -f',
    });

    await coord.kill('SIGKILL');
    for (const f of [waiting, logs, interventions])
      await waitFor(() => f.err().includes('(lost the coordinator'), {
        what: 'each to say it lost the coordinator',
      });
    await coord.restart();
    for (const f of [waiting, logs, interventions])
      await waitFor(() => f.err().includes('(the coordinator is back'), {
        what: 'each to say the coordinator is back',
        timeoutMs: 15_000,
      });

    // Work goes on: a new log line, a manual intervention, the waited task completed.
    await agent.appendLogs(logged.id, { version: held!.version, lines: [{ text: 'after the restart' }] });
    const wake = await admin.sendCommand(agentId, { type: 'wake' });
    const [waited] = (await agent.claim(agentId, { types: ['waited'], max: 1, waitMs: 5000 })).tasks;
    expect(waited).toBeDefined();
    await agent.startTask(waited!.id, waited!.version);
    await agent.completeTask(waited!.id, { version: waited!.version, result: { ok: true } });
    await agent.completeTask(logged.id, { version: held!.version, result: null });

    expect(await waitForExit(waiting.child, 15_000)).toBe(0);
    expect(waiting.out()).toMatch(/completed in .*, attempt 1/);
    expect(count(waiting.out(), '∅ → created')).toBe(1);

    expect(await waitForExit(logs.child, 15_000)).toBe(0);
    expect(count(logs.out(), 'before the restart')).toBe(1);
    expect(count(logs.out(), 'after the restart')).toBe(1);

    await waitFor(() => interventions.out().includes(wake.intervention!.id), { what: 'the wake, followed' });
    interventions.child.kill('SIGINT');
    expect(await waitForExit(interventions.child)).toBe(0);

    for (const f of [waiting, logs, interventions]) {
      expect(count(f.err(), '(lost the coordinator')).toBe(1);
      expect(count(f.err(), '(the coordinator is back')).toBe(1);
    }
  }, 90_000);

  it('a coordinator never reached is still exit 3 at once, not a wait', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    for (const args of [
      ['logs', '-f', 'tsk_none'],
      ['interventions', '-f'],
    ]) {
      const r = await runCli([...args, '--url', url, '--token', 'rsk_admin_x'], {
        cwd: tempDir('rouse-follow-'),
        timeoutMs: 15_000,
      });
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr).toMatch(/cannot reach the coordinator/);
      expect(r.stderr).not.toMatch(/lost the coordinator/);
    }
  });
});
