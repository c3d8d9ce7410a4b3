/**
 * What only PostgreSQL has in the agent and watchdog parts of the store: migration 0009's backfill
 * (the shard computed in SQL), heartbeats computed in SQL agreeing with agent-heartbeat-rules.ts, and
 * several stores with their own pools writing one agent's conditions at once.
 */
import type { Json } from '@rouse/protocol';
import * as fc from 'fast-check';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FreshSchema, freshSchema } from '../../../../../test/harness/postgres.js';
import { ManualClock } from '../../core/clock.js';
import { SampleRing } from '../../core/watchdog/samples.js';
import { beat, newAgent } from '../../test-support/store-contract/agent-fixtures.js';
import { T0 } from '../../test-support/store-contract/harness.js';
import { heartbeatColumns } from '../agent-heartbeat-rules.js';
import { type AgentRow, conditionToken, toWatch } from '../agent-row.js';
import { shardOf } from '../lease-shards.js';
import type { ConditionChange, Store } from '../store.js';
import { migrateOnClient, POSTGRES_MIGRATIONS } from './migrate.js';
import { createPostgresStore } from './postgres-store.js';

describe('PostgreSQL agents and watchdog', () => {
  let db: FreshSchema;
  const stores: Store[] = [];
  const open = async (clock: ManualClock, poolSize = 4) => {
    const store = await createPostgresStore({
      connectionString: db.connectionString,
      schema: db.schema,
      clock,
      poolSize,
    });
    stores.push(store);
    return store;
  };

  beforeEach(async () => {
    db = await freshSchema('pgwatch');
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await db.drop();
  });

  it('0009 backfills the agents registered before: lifecycle, reported status, lease and shard', async () => {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    const before = POSTGRES_MIGRATIONS.findIndex((m) => m.name === '0009_watchdog');
    const old = [
      { id: 'agt_running', status: 'running', beat: T0 + 500 },
      { id: 'agt_left', status: 'left', beat: T0 + 700 },
      { id: 'agt_lost', status: 'lost', beat: null },
      { id: 'agt_é', status: 'error', beat: T0 + 100 },
      { id: 'agt_\u{1F600}_2', status: 'idle', beat: null },
    ];
    try {
      await migrateOnClient(client, db.schema, T0, POSTGRES_MIGRATIONS.slice(0, before));
      for (const [n, a] of old.entries()) {
        await client.query(
          `INSERT INTO "${db.schema}".agents (id, agent_type, name, task_types, labels, token_hash, status,
                                             registered_at, last_heartbeat_at)
           VALUES ($1, 'worker', $1, '[]', '{}', $2, $3, $4, $5)`,
          [a.id, `hash-${n}`, a.status, T0 + n, a.beat],
        );
      }
      await migrateOnClient(client, db.schema, T0);
      const rows = (
        await client.query(
          `SELECT id, shard, lifecycle, reported_status, started_at, reported_status_since, ended_at,
                  lease_expires_at
           FROM "${db.schema}".agents ORDER BY seq`,
        )
      ).rows;
      expect(rows).toEqual(
        old.map((a, n) => ({
          id: a.id,
          shard: shardOf(a.id),
          lifecycle: a.status === 'left' ? 'left' : 'active',
          reported_status: a.status === 'left' || a.status === 'lost' ? 'idle' : a.status,
          started_at: String(T0 + n),
          reported_status_since: String(T0 + n),
          ended_at: a.status === 'left' ? String(a.beat) : null,
          lease_expires_at: a.status === 'left' ? null : String((a.beat ?? T0 + n) + 15_000),
        })),
      );
      const columns = await client.query(
        `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'agents'
           AND column_name = 'status'`,
        [db.schema],
      );
      expect(columns.rowCount).toBe(0);
    } finally {
      await client.end();
    }
    const store = await open(new ManualClock(T0 + 1000));
    expect((await store.listAgents()).agents.map((a) => [a.id, a.status])).toEqual([
      ['agt_running', 'running'],
      ['agt_left', 'left'],
      ['agt_lost', 'idle'],
      ['agt_é', 'error'],
      ['agt_\u{1F600}_2', 'idle'],
    ]);
  });

  it('computes each heartbeat in SQL as agent-heartbeat-rules.ts does (property)', async () => {
    const clock = new ManualClock(T0);
    const store = await open(clock);
    const progress = fc.option(
      fc.record({
        value: fc.constantFrom<Json>(null, 0, 0.5, 'step', { done: 1, of: 3 }, { done: 2, of: 3 }, [1, 2]),
        phase: fc.constantFrom(null, 'read', 'write'),
      }),
      { nil: undefined },
    );
    const input = fc.record({
      status: fc.option(fc.constantFrom('idle' as const, 'running' as const, 'error' as const), {
        nil: undefined,
      }),
      statusMessage: fc.option(fc.constantFrom('boom', 'slow'), { nil: undefined }),
      metrics: fc.option(fc.record({ rssBytes: fc.nat(1e9) }), { nil: undefined }),
      metadata: fc.option(fc.record({ step: fc.nat(5) }), { nil: undefined }),
      progress,
      leaseMs: fc.integer({ min: 100, max: 20_000 }),
      quietPeriodMs: fc.constantFrom(0, 2000, 60_000),
      sample: fc.option(
        fc.record({
          rssBytes: fc.option(fc.nat(2 ** 40), { nil: null }),
          cpuPercent: fc.option(
            fc.integer({ min: 0, max: 4000 }).map((n) => n / 10),
            { nil: null },
          ),
          iterationMs: fc.option(fc.nat(10_000), { nil: null }),
        }),
        { nil: undefined },
      ),
      sampleSpacingMs: fc.constantFrom(0, 500, 1000),
      maxSamples: fc.integer({ min: 0, max: 4 }),
      maxGaps: fc.integer({ min: 0, max: 3 }),
    });
    // Each step: a wait, then a batch of one or two beats of the agent (the second sees the first).
    const step = fc.record({ waitMs: fc.nat(1500), beats: fc.array(input, { minLength: 1, maxLength: 2 }) });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const id = `agt_prop_${n++}`;
        const { agent } = await store.registerAgent(newAgent(id, { tokenHash: `hash-${id}` }));
        let model: AgentRow = {
          id,
          agent_key: null,
          incarnation: 1,
          agent_type: agent.agentType,
          name: agent.name,
          host: agent.host,
          pid: agent.pid,
          task_types: agent.taskTypes,
          labels: agent.labels,
          requires: agent.requires,
          supervisor_id: null,
          policy: agent.policy,
          lifecycle: 'active',
          reported_status: 'idle',
          reported_status_since: agent.startedAt,
          status_message: null,
          registered_at: agent.registeredAt,
          started_at: agent.startedAt,
          last_heartbeat_at: null,
          lease_expires_at: agent.leaseExpiresAt,
          heartbeat_interval_ms: agent.heartbeatIntervalMs,
          last_poll_at: null,
          last_poll_types: [],
          metrics: null,
          metadata: null,
          progress: null,
          phase: null,
          progress_changed_at: null,
          ended_at: null,
          open_conditions: [],
          samples: SampleRing.EMPTY,
          gaps: [],
        };
        for (const s of steps) {
          clock.advance(s.waitMs);
          const inputs = s.beats.map((b) => beat(id, b));
          const results = await store.recordAgentHeartbeats(inputs);
          for (const [i, one] of inputs.entries()) {
            model = {
              ...model,
              ...heartbeatColumns(model, one, clock.now()),
              metrics: one.metrics ?? model.metrics,
              metadata: one.metadata ?? model.metadata,
            };
            expect(results[i]?.watch).toEqual(toWatch(model, []));
          }
        }
        expect(await store.getAgentWatches([id])).toEqual([toWatch(model, [])]);
      }),
      { numRuns: 40 },
    );
  });

  it('keeps open_conditions equal to the open conditions while several stores write at once', async () => {
    const clock = new ManualClock(T0);
    const a = await open(clock, 8);
    const b = await open(clock, 8);
    const ids = ['agt_r1', 'agt_r2', 'agt_r3'];
    for (const id of ids) await a.registerAgent(newAgent(id, { key: id, tokenHash: `hash-${id}-1` }));
    const kinds = ['progress_stalled', 'dependency_down', 'resource_runaway', 'heartbeat_timeout'] as const;
    const incarnation = new Map(ids.map((id) => [id, 1]));
    let registrations = 0;
    let random = 12345;
    const pick = <T>(xs: readonly T[]): T => {
      random = (random * 1103515245 + 12345) % 2 ** 31;
      return xs[random % xs.length]!;
    };
    const change = (): ConditionChange => {
      const agentId = pick(ids);
      const condition = pick(kinds);
      const taskId = pick([null, null, 'tsk_1', 'tsk_2']);
      return pick([true, false])
        ? {
            kind: 'open',
            agentId,
            incarnation: incarnation.get(agentId)!,
            condition,
            taskId,
            since: T0,
            evidence: {},
            openedBy: 'coordinator:x',
          }
        : { kind: 'close', agentId, condition, taskId, reason: 'cleared' };
    };
    const worker = async (store: Store, rounds: number) => {
      for (let r = 0; r < rounds; r++) {
        const what = pick(['changes', 'changes', 'changes', 'lost', 'beat', 'register']);
        const agentId = pick(ids);
        if (what === 'changes') {
          await store.applyConditionChanges(Array.from({ length: 1 + (r % 4) }, change));
        } else if (what === 'lost') {
          const adaptive = pick([true, false]) ? { lastHeartbeatAt: null } : {};
          await store.markAgentsLost([
            { agentId, incarnation: incarnation.get(agentId)!, evidence: {}, openedBy: 'x', ...adaptive },
          ]);
        } else if (what === 'beat') {
          await store.recordAgentHeartbeats([beat(agentId, { incarnation: incarnation.get(agentId)! })]);
        } else {
          registrations += 1;
          const { agent } = await store.registerAgent(
            newAgent(`agt_new_${registrations}`, { key: agentId, tokenHash: `hash-${registrations}` }),
          );
          incarnation.set(agentId, Math.max(incarnation.get(agentId)!, agent.incarnation));
        }
      }
    };
    // Meanwhile, every committed state must hold the invariant: a reader's one snapshot sees each
    // agent's list equal to its open conditions in opening order.
    const checker = new pg.Client({ connectionString: db.connectionString });
    await checker.connect();
    const seen = { checks: 0, broken: [] as unknown[] };
    let working = true;
    const check = async () => {
      while (working) {
        const { rows } = await checker.query(
          `SELECT a.id, a.open_conditions AS list,
             (SELECT COALESCE(jsonb_agg(CASE WHEN c.task_id = '' THEN c.condition ELSE c.condition || ' ' || c.task_id END
                                        ORDER BY c.seq), '[]'::jsonb)
              FROM "${db.schema}".agent_conditions c WHERE c.agent_id = a.id AND c.closed_at IS NULL) AS open
           FROM "${db.schema}".agents a`,
        );
        seen.checks += 1;
        seen.broken.push(...rows.filter((r) => JSON.stringify(r.list) !== JSON.stringify(r.open)));
      }
    };
    // Every startup lease has passed: an agent is lost until it beats or registers again.
    clock.advance(100_000);
    const checking = check();
    try {
      await Promise.all(Array.from({ length: 8 }, (_, i) => worker(i % 2 === 0 ? a : b, 60)));
    } finally {
      working = false;
      await checking;
      await checker.end();
    }
    expect(seen.checks).toBeGreaterThan(10);
    expect(seen.broken).toEqual([]);
    await a.endAgent({ agentId: 'agt_r3', lifecycle: 'left', reason: 'left' });
    const watches = await b.getAgentWatches(ids);
    for (const w of watches) {
      const open = (await a.listConditions({ agentId: w.agentId, open: true })).reverse();
      expect(w.openConditions.map(conditionToken)).toEqual(open.map(conditionToken));
      expect(open.every((c) => c.incarnation === w.incarnation)).toBe(true);
      if (w.agentId === 'agt_r3') expect(open).toEqual([]);
    }
    expect(watches.reduce((sum, w) => sum + w.incarnation - 1, 0)).toBe(registrations);
    const counts = await a.agentStatusCounts();
    expect(counts.reduce((sum, c) => sum + c.count, 0)).toBe(ids.length);
  });
});
