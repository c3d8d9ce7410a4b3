/**
 * The live event stream across coordinators (issue 3: clients spread over coordinators behind any load
 * balancer): a client of coordinator A's `GET /v1/events` hears what happens through coordinator B,
 * relayed through PostgreSQL while it listens.
 */
import type { StreamEvent } from '@rouse/protocol';
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../harness/cluster.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

let schema: FreshSchema | undefined;
let cluster: Cluster | undefined;
const streams: AbortController[] = [];

afterEach(async () => {
  for (const s of streams.splice(0)) s.abort();
  await cluster?.stop();
  cluster = undefined;
  await schema?.drop();
  schema = undefined;
});

describe('the live event stream across coordinators', () => {
  it("a client of A's /v1/events hears tasks created, claimed, run and completed, and interventions, through B", async () => {
    schema = await freshSchema('mc_events');
    cluster = await startCluster(schema);
    const [a, b] = cluster.coordinators;
    if (a === undefined || b === undefined) throw new Error('the cluster has two coordinators');
    const adminA = new Client({ url: a.url, token: cluster.adminToken });
    const adminB = new Client({ url: b.url, token: cluster.adminToken });

    const heard: StreamEvent[] = [];
    const ac = new AbortController();
    streams.push(ac);
    void (async () => {
      try {
        for await (const event of adminA.events({ signal: ac.signal })) heard.push(event);
      } catch {
        // aborted at the end of the test
      }
    })();
    const createdIds = () => heard.flatMap((e) => (e.type === 'task.created' ? [e.task.id] : []));

    // B relays from its next shard renewals on (TTL 1 s here): probe until A's client hears one.
    let probe = '';
    for (let i = 0; i < 100 && (probe === '' || !createdIds().includes(probe)); i++) {
      probe = (await adminB.createTask({ type: 'probe', payload: { i } })).task.id;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(createdIds()).toContain(probe);

    const enrollB = new Client({ url: b.url, token: cluster.agentToken });
    const reg = await enrollB.registerAgent({ agentType: 'test', name: 'worker', taskTypes: ['work'] });
    const agentB = enrollB.withToken(reg.token);
    const { task } = await adminB.createTask({ type: 'work', payload: { n: 1 } });
    const { tasks } = await agentB.claim(reg.agent.id, { types: ['work'], max: 1, start: true });
    expect(tasks.map((t) => t.id)).toEqual([task.id]);
    await agentB.completeTask(task.id, { version: tasks[0]!.version, result: { ok: true } });

    const transitionsOf = () =>
      heard.flatMap((e) => (e.type === 'task.transition' && e.task.id === task.id ? [e.event.to] : []));
    await waitFor(() => transitionsOf().includes('completed'), {
      timeoutMs: 10_000,
      what: 'the completion on A',
    });
    expect(createdIds()).toContain(task.id);
    expect(transitionsOf()).toEqual(['claimed', 'running', 'completed']);
    const last = heard.findLast((e) => e.type === 'task.transition' && e.task.id === task.id);
    expect(last?.type === 'task.transition' && last.task.result).toEqual({ ok: true });
    // A's own view agrees with what it streamed.
    expect((await adminA.getTask(task.id)).status).toBe('completed');

    // An intervention recorded through B (a person's wake) reaches A's client too.
    const sent = await adminB.sendCommand(reg.agent.id, { type: 'wake', reason: 'checking in' });
    const intervention = await waitFor(
      () =>
        heard.find((e) => e.type === 'intervention' && e.intervention.id === sent.intervention?.id) ?? null,
      { timeoutMs: 10_000, what: 'the intervention on A' },
    );
    expect(intervention.type === 'intervention' && intervention.intervention).toMatchObject({
      agentId: reg.agent.id,
      action: 'wake',
      condition: 'manual',
    });
  });
});
