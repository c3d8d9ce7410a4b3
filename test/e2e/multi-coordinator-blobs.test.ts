/**
 * Results uploaded through one coordinator are read through another (issue 3: agents and clients
 * spread over coordinators behind any load balancer): with PostgreSQL the blobs live in the database,
 * not in one coordinator's data directory.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@rouse/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../harness/cluster.js';
import { type FreshSchema, freshSchema } from '../harness/postgres.js';

let schema: FreshSchema | undefined;
let cluster: Cluster | undefined;

afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
  await schema?.drop();
  schema = undefined;
});

describe('result blobs across coordinators', () => {
  it('a large result uploaded through coordinator A is served by coordinator B, byte for byte', async () => {
    schema = await freshSchema('mc_blobs');
    cluster = await startCluster(schema);
    const [a, b] = cluster.coordinators;
    if (a === undefined || b === undefined) throw new Error('the cluster has two coordinators');
    const adminA = new Client({ url: a.url, token: cluster.adminToken });
    const adminB = new Client({ url: b.url, token: cluster.adminToken });
    const enrollA = new Client({ url: a.url, token: cluster.agentToken });

    const { task } = await adminB.createTask({ type: 'report', payload: { n: 1 } });
    const reg = await enrollA.registerAgent({ agentType: 'test', name: 'uploader', taskTypes: ['report'] });
    const agentA = enrollA.withToken(reg.token);
    const { tasks } = await agentA.claim(reg.agent.id, { types: ['report'], max: 1, start: true });
    expect(tasks.map((t) => t.id)).toEqual([task.id]);
    const held = tasks[0]!;

    // Over the 64 KiB inline limit and over one stored chunk (1 MiB).
    const body = randomBytes(1536 * 1024);
    const ref = await agentA.uploadResult(held.id, held.version, body, 'application/octet-stream');
    expect(ref.sizeBytes).toBe(body.length);
    await agentA.completeTask(held.id, { version: held.version });

    const viaB = await adminB.getResult(held.id);
    expect(viaB.contentType).toBe('application/octet-stream');
    expect(createHash('sha256').update(viaB.body).digest('hex')).toBe(ref.sha256);
    expect(viaB.body.equals(body)).toBe(true);
    expect((await adminA.getResult(held.id)).body.equals(body)).toBe(true);
    expect((await adminB.getTask(held.id)).resultRef).toEqual(ref);
  });
});
