/**
 * The watchdog's CLI surfaces, with the real binary: `rouse serve --policies`, `rouse policy check`,
 * `rouse agents` (derived status, conditions, incarnation, filters), `rouse agent show`, and
 * `rouse why` for an agent and for a task whose only agents are lost.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@rouse/sdk';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type CliResult, runCli, spawnCli, spawnCliRunning, waitForExit } from './run-cli.js';

const POLICY = `policies:
  - name: fast
    agent_type: cli-watch
    heartbeat: { expected_interval: 200ms, timeout_factor: 3 }
    startup_timeout: 1s
`;

let dir: string;
let server: ChildProcess;
let serverErr = '';
let url: string;
let enrollToken: string;
let adminToken: string;

const rouse = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: dir });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-cli-watch-'));
  await writeFile(join(dir, 'rouse.yaml'), POLICY);
  server = spawnCli(['serve', '--port', '0', '--policies', 'rouse.yaml'], { cwd: dir });
  server.stderr?.on('data', (d) => {
    serverErr += d;
  });
  const file = join(dir, '.rouse', 'server.json');
  const until = Date.now() + 15_000;
  for (;;) {
    try {
      ({ url } = JSON.parse(await readFile(file, 'utf8')) as { url: string });
      break;
    } catch {
      if (Date.now() > until || server.exitCode !== null)
        throw new Error(`serve did not start: ${serverErr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  enrollToken = (await readFile(join(dir, '.rouse', 'agent.token'), 'utf8')).trim();
  adminToken = (await readFile(join(dir, '.rouse', 'admin.token'), 'utf8')).trim();
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await waitForExit(server);
  }
  await rm(dir, { recursive: true, force: true });
});

/** Bounded polling of the coordinator. */
async function until<T>(probe: () => Promise<T | null>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('rouse serve --policies', () => {
  it('loads the file and says so in its banner; a broken file is refused at start with its line (exit 2)', async () => {
    // The banner may still be on its way when server.json appears.
    await until(async () => (serverErr.includes('rouse.yaml') ? true : null), 'the banner');
    const admin = new Client({ url, token: adminToken });
    expect((await admin.policies()).policies.map((p) => p.name)).toContain('fast');
    await writeFile(join(dir, 'broken.yaml'), 'policies:\n  - name: x\n    agent_typ: x\n');
    const r = await rouse(
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(dir, 'other'),
      '--policies',
      'broken.yaml',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('broken.yaml:3:');
    expect(r.stderr).toContain('agent_typ');
  });
});

describe('rouse policy check', () => {
  it('says ok for a valid file and lists its policies (exit 0)', async () => {
    const r = await rouse('policy', 'check', 'rouse.yaml');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('fast (cli-watch)');
  });

  it('prints every error as file:line:column: field: message (exit 1), and JSON with --json', async () => {
    await writeFile(
      join(dir, 'two-errors.yaml'),
      'policies:\n  - name: a\n    agent_type: a\n    heartbeat: { expected_interval: 5 minutes }\n    quiet_period: -1\n',
    );
    const r = await rouse('policy', 'check', 'two-errors.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/two-errors\.yaml:4:\d+: policies\.0\.heartbeat\.expected_interval: /);
    expect(r.stderr).toMatch(/two-errors\.yaml:5:\d+: policies\.0\.quiet_period: /);
    const j = await rouse('policy', 'check', 'two-errors.yaml', '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ valid: false, errors: [{ line: 4 }, { line: 5 }] });
    const missing = await rouse('policy', 'check', 'nope.yaml');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read nope.yaml');
  });
});

describe('rouse agents, agent show, why', () => {
  it('shows derived statuses, conditions and incarnations, and explains a lost agent and its orphaned task', async () => {
    const enroll = new Client({ url, token: enrollToken });
    const admin = new Client({ url, token: adminToken });
    const reg = await enroll.registerAgent({ agentType: 'cli-watch', key: 'box/w1', taskTypes: ['cli-job'] });
    const again = await enroll.registerAgent({
      agentType: 'cli-watch',
      key: 'box/w1',
      taskTypes: ['cli-job'],
    });
    expect(again.incarnation).toBe(2);
    const agent = enroll.withToken(again.token);
    await agent.agentHeartbeat(reg.agent.id, { status: 'running' });
    const { task } = await admin.createTask({ type: 'cli-job' });
    // No more heartbeats: it is lost within its 600 ms lease.
    await until(async () => ((await admin.getAgent(reg.agent.id)).status === 'lost' ? true : null), 'lost');

    const list = await rouse('agents');
    expect(list.code).toBe(0);
    const row = list.stdout.split('\n').find((l) => l.startsWith(reg.agent.id));
    expect(row).toMatch(/lost\s+2\s+heartbeat_timeout/);
    expect(list.stdout.split('\n')[0]).toMatch(/STATUS\s+INC\s+CONDITIONS/);
    const lost = JSON.parse((await rouse('agents', '--status', 'lost', '--json')).stdout) as {
      agents: { id: string }[];
    };
    expect(lost.agents.map((a) => a.id)).toEqual([reg.agent.id]);
    expect(JSON.parse((await rouse('agents', '--status', 'idle', '--json')).stdout).agents).toEqual([]);
    const bad = await rouse('agents', '--status', 'asleep');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"asleep" is not a status');

    const show = await rouse('agent', 'show', reg.agent.id);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('box/w1');
    expect(show.stdout).toContain('incarnation 2');
    expect(show.stdout).toContain('Open conditions');
    expect(show.stdout).toMatch(/heartbeat_timeout/);
    expect(show.stdout).toMatch(/last heartbeat at/);

    const why = await rouse('why', reg.agent.id);
    expect(why.code).toBe(0);
    expect(why.stdout).toContain(`is lost`);
    const whyJson = JSON.parse((await rouse('why', reg.agent.id, '--json')).stdout) as {
      reasons: { code: string }[];
    };
    expect(whyJson.reasons[0]?.code).toBe('heartbeat_timeout');

    // The task waits on a type whose only agent is lost: the diagnosis says so, never "busy".
    const taskWhy = JSON.parse((await rouse('why', task.id, '--json')).stdout) as {
      reasons: { code: string; details: { agents: { id: string }[] } }[];
    };
    expect(taskWhy.reasons.map((r) => r.code)).toEqual(['agents_lost']);
    expect(taskWhy.reasons[0]!.details.agents.map((a) => a.id)).toEqual([reg.agent.id]);
    const text = await rouse('why', task.id);
    expect(text.stdout).toContain('is lost');
    expect(text.stdout).not.toContain('busy');
  });
});

describe('rouse wake|restart|terminate and rouse interventions', () => {
  it('records a manual intervention, ended by the agent acknowledging the command; lists and follows them', async () => {
    const enroll = new Client({ url, token: enrollToken });
    const reg = await enroll.registerAgent({ agentType: 'cli-manual', taskTypes: ['cli-manual'] });
    const agent = enroll.withToken(reg.token);
    const id = reg.agent.id;
    // Follow first: it prints the existing list, then every change.
    const follower = spawnCliRunning(['interventions', '-f', '--json', '--agent', id], { cwd: dir });
    // A follower outlives its coordinator (it waits for it to come back): never left running.
    onTestFinished(() => {
      if (follower.child.exitCode === null) follower.child.kill('SIGKILL');
    });
    await until(
      async () => (follower.err().includes('following interventions') ? true : null),
      'the follower',
    );

    const wake = await rouse('wake', id, '--reason', 'no progress since lunch', '--json');
    expect(wake.code).toBe(0);
    const sent = JSON.parse(wake.stdout) as { commandId: string; intervention: { id: string } };
    expect(sent.intervention).toMatchObject({
      action: 'wake',
      state: 'pending',
      condition: 'manual',
      actor: 'admin',
    });
    const human = await rouse('terminate', id);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`terminate queued for ${id}`);

    const beat = await agent.agentHeartbeat(id, {});
    expect(beat.commands.map((c) => c.type)).toEqual(['wake', 'terminate']);
    const terminateId = beat.commands[1]?.id;
    await agent.agentHeartbeat(id, {
      acks: [{ commandId: terminateId!, outcome: 'done', message: 'stopping' }],
    });

    const table = await rouse('interventions', '--agent', id);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/ID\s+AGENT\s+CONDITION\s+ACTION\s+RUNG\s+ATTEMPT\s+STATE/);
    expect(lines[1]).toMatch(/manual\s+terminate\s+-\s+-\s+succeeded\s+admin/);
    expect(lines[2]).toMatch(/manual\s+wake\s+-\s+-\s+skipped\s+admin/);
    const pending = JSON.parse(
      (await rouse('interventions', '--agent', id, '--state', 'pending', '--json')).stdout,
    );
    expect(pending.interventions).toEqual([]);
    const bad = await rouse('interventions', '--state', 'asleep');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--state: "asleep" is not a state');

    // The follower saw the opening, the supersession and the end, one JSON object per line.
    await until(
      async () => (follower.out().split('\n').filter(Boolean).length >= 4 ? true : null),
      'followed changes',
    );
    const changes = follower
      .out()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { action: string; state: string });
    expect(changes.map((c) => `${c.action} ${c.state}`)).toEqual([
      'wake pending',
      'wake skipped',
      'terminate pending',
      'terminate succeeded',
    ]);
    follower.child.kill('SIGINT');
    expect(await waitForExit(follower.child)).toBe(0);
  });
});
