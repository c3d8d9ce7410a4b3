/**
 * Issue test 1: 32 agents race to claim 500 tasks over HTTP against a real coordinator process; each
 * task is claimed exactly once per attempt, and the event histories agree.
 */
import { Client } from '@rouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';

let coord: CoordinatorProcess;
beforeAll(async () => {
  coord = await startCoordinatorProcess();
});
afterAll(async () => {
  await coord?.kill('SIGTERM');
});

describe('claim race', () => {
  it('32 agents, 500 tasks: every task claimed exactly once', async () => {
    const admin = new Client({ url: coord.url, token: coord.adminToken });
    const created = await admin.createTasks(
      Array.from({ length: 500 }, (_, i) => ({ type: 'race', payload: { i }, maxAttempts: 1 })),
    );
    expect(created).toHaveLength(500);

    const enroll = new Client({ url: coord.url, token: coord.agentToken });
    const agents = await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        enroll.registerAgent({ agentType: 'racer', name: `racer-${i}`, taskTypes: ['race'] }),
      ),
    );
    const claimedBy = new Map<string, string[]>();
    await Promise.all(
      agents.map(async ({ agent, token }, i) => {
        const client = new Client({ url: coord.url, token });
        // Bounded: at most 500 rounds each; stops at the first empty answer.
        for (let round = 0; round < 500; round++) {
          const { tasks } = await client.claim(agent.id, {
            types: ['race'],
            max: 1 + (i % 4),
            waitMs: 0,
            start: i % 2 === 0,
          });
          if (tasks.length === 0) break;
          for (const t of tasks) {
            claimedBy.set(t.id, [...(claimedBy.get(t.id) ?? []), agent.id]);
            expect(t.attempt).toBe(1);
            expect(t.agentId).toBe(agent.id);
          }
        }
      }),
    );
    expect(claimedBy.size).toBe(500);
    for (const [id, holders] of claimedBy) expect(holders, id).toHaveLength(1);
    // Several agents actually took part.
    expect(new Set([...claimedBy.values()].flat()).size).toBeGreaterThan(8);

    // The histories say the same: one claim per task, by the agent that got it.
    const sample = [...claimedBy.keys()].filter((_, i) => i % 10 === 0);
    for (const id of sample) {
      const events = await admin.getTaskEvents(id);
      const claims = events.filter((e) => e.to === 'claimed');
      expect(claims).toHaveLength(1);
      expect(claims[0]!.actor).toContain(claimedBy.get(id)![0]!);
    }
    const { tasks: left } = await admin.listTasks({ status: 'created', type: 'race' });
    expect(left).toHaveLength(0);
  });
});
