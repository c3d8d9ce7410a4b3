import { describe, expect, it } from 'vitest';
import { RouseError, UnavailableError } from '../core/errors.js';
import type {
  AgentHeartbeatInput,
  AgentWatch,
  ClaimInput,
  CompleteAndClaimResult,
  CompleteInput,
  CreatedTask,
  NewTask,
} from '../store/store.js';
import { BACKOFF } from '../test-support/store-contract/harness.js';
import { BACKGROUND_STORE_CALLS } from './limited.js';
import { AGENT_HEARTBEAT_LINGER_MS, type BatchedWrites, createWriteBatcher } from './write-batcher.js';

function fakeStore(fail: (tasks: NewTask[]) => Error | null): { store: BatchedWrites; calls: string[][] } {
  const calls: string[][] = [];
  const store: BatchedWrites = {
    async createTasks(tasks) {
      calls.push(tasks.map((t) => t.id));
      const err = fail(tasks);
      if (err) throw err;
      return tasks.map((t) => ({ task: { id: t.id }, deduplicated: false }) as unknown as CreatedTask);
    },
    async completeTasks() {
      return [];
    },
    async recordHeartbeats(beats) {
      calls.push(beats.map((b) => `task:${b.taskId}`));
      return beats.map((b) => ({
        ok: true,
        value: {
          taskId: b.taskId,
          leaseExpiresAt: b.version,
          progressed: false,
          status: 'running',
          progressChangedAt: null,
          stallTimeoutMs: 1000,
          requires: [],
        },
      }));
    },
    async recordAgentHeartbeats(inputs) {
      calls.push(inputs.map((i) => `beat:${i.agentId}`));
      return inputs.map((i) =>
        i.agentId === 'agt_gone'
          ? null
          : { commands: [{ type: 'wake', reason: i.agentId }], watch: { agentId: i.agentId } as AgentWatch },
      );
    },
    async applyConditionChanges(changes) {
      calls.push(changes.map((c) => `${c.kind}:${c.agentId}:${c.condition}`));
      return changes.map(() => null);
    },
  };
  return { store, calls };
}

const task = (id: string): NewTask => ({ id }) as NewTask;

describe('write batcher', () => {
  it('writes the creates of one event-loop turn in one store call, each caller gets its own', async () => {
    const { store, calls } = fakeStore(() => null);
    const w = createWriteBatcher(store);
    const results = await Promise.all(['a', 'b', 'c'].map((id) => w.createTask(task(id))));
    expect(calls).toEqual([['a', 'b', 'c']]);
    expect(results.map((r) => r.task.id)).toEqual(['a', 'b', 'c']);
    await w.createTask(task('d'));
    expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('retries a failed batch one by one, so only the bad item fails', async () => {
    const bad = new RouseError('conflict', 'bad', {});
    const { store, calls } = fakeStore((tasks) => (tasks.some((t) => t.id === 'b') ? bad : null));
    const w = createWriteBatcher(store);
    const results = await Promise.allSettled(['a', 'b', 'c'].map((id) => w.createTask(task(id))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBe(bad);
    expect(calls).toEqual([['a', 'b', 'c'], ['a'], ['b'], ['c']]);
  });

  it('writes a failed batch again a few items at a time, not all at once', async () => {
    let inFlight = 0;
    let most = 0;
    const { store } = fakeStore(() => null);
    const singles: string[] = [];
    store.createTasks = async (tasks) => {
      if (tasks.length > 1) throw new RouseError('conflict', 'one of them is bad', {});
      singles.push(tasks[0]!.id);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setImmediate(r)); // pending a turn, as a pooled query is
      inFlight--;
      if (tasks[0]!.id === 't7') throw new RouseError('conflict', 'bad', {});
      return [{ task: { id: tasks[0]!.id }, deduplicated: false } as unknown as CreatedTask];
    };
    const w = createWriteBatcher(store);
    const ids = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const results = await Promise.allSettled(ids.map((id) => w.createTask(task(id))));
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[7]!.status).toBe('rejected');
    expect(singles).toEqual(ids);
    expect(most).toBe(BACKGROUND_STORE_CALLS);
  });

  it('fails the whole batch at once when the store is unavailable', async () => {
    const down = new UnavailableError('down');
    const { store, calls } = fakeStore(() => down);
    const w = createWriteBatcher(store);
    const results = await Promise.allSettled(['a', 'b'].map((id) => w.createTask(task(id))));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toEqual([['a', 'b']]);
  });

  it('writes the agent heartbeats of one turn in one store call; each gets its own commands, or null', async () => {
    const { store, calls } = fakeStore(() => null);
    const w = createWriteBatcher(store);
    const results = await Promise.all(
      ['agt_a', 'agt_gone', 'agt_b'].map((agentId) =>
        w.agentHeartbeat({ agentId, status: 'idle' } as AgentHeartbeatInput),
      ),
    );
    expect(calls).toEqual([['beat:agt_a', 'beat:agt_gone', 'beat:agt_b']]);
    expect(results.map((r) => r?.commands ?? null)).toEqual([
      [{ type: 'wake', reason: 'agt_a' }],
      null,
      [{ type: 'wake', reason: 'agt_b' }],
    ]);
  });

  it("lets agent heartbeats of the next turns share the first one's commit (a short linger)", async () => {
    const { store, calls } = fakeStore(() => null);
    const w = createWriteBatcher(store);
    const beat = (agentId: string) => w.agentHeartbeat({ agentId, status: 'idle' } as AgentHeartbeatInput);
    const first = beat('agt_a');
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([]);
    const second = beat('agt_b');
    await Promise.all([first, second]);
    expect(calls).toEqual([['beat:agt_a', 'beat:agt_b']]);
    await new Promise((r) => setTimeout(r, AGENT_HEARTBEAT_LINGER_MS + 5));
    await beat('agt_c');
    expect(calls).toEqual([['beat:agt_a', 'beat:agt_b'], ['beat:agt_c']]);
  });

  it('writes the condition changes of one turn in one store call', async () => {
    const { store, calls } = fakeStore(() => null);
    const w = createWriteBatcher(store);
    await Promise.all([
      w.conditionChange({
        kind: 'close',
        agentId: 'agt_a',
        condition: 'progress_stalled',
        taskId: null,
        reason: 'x',
      }),
      w.conditionChange({
        kind: 'close',
        agentId: 'agt_b',
        condition: 'dependency_down',
        taskId: null,
        reason: 'x',
      }),
    ]);
    expect(calls).toEqual([['close:agt_a:progress_stalled', 'close:agt_b:dependency_down']]);
  });

  it('writes the task heartbeats of one turn, from several requests, in one store call', async () => {
    const { store, calls } = fakeStore(() => null);
    const w = createWriteBatcher(store);
    const beat = (taskId: string, version: number) =>
      w.taskHeartbeat({ taskId, agentId: 'agt_a', version, writeBackGraceMs: 0 });
    const [first, second] = await Promise.all([
      Promise.all([beat('tsk_1', 1), beat('tsk_2', 2)]),
      Promise.all([beat('tsk_3', 3)]),
    ]);
    expect(calls).toEqual([['task:tsk_1', 'task:tsk_2', 'task:tsk_3']]);
    expect([...first, ...second].map((o) => (o.ok ? o.value.leaseExpiresAt : null))).toEqual([1, 2, 3]);
  });

  describe('complete-and-claim', () => {
    const claim = (agentId: string): ClaimInput => ({
      agentId,
      types: ['t'],
      max: 2,
      start: true,
      backoff: BACKOFF,
    });
    const done = (agentId: string, version: number): CompleteInput[] => [
      { taskId: `tsk_${agentId}`, agentId, version },
    ];
    const answer = (complete: CompleteInput[], c: ClaimInput): CompleteAndClaimResult => ({
      completed: complete.map((i) => ({ ok: false, code: `${c.agentId}:${i.version}`, message: 'refused' })),
      claimed: [],
    });

    it('writes the requests of one turn in one store call when the store offers it, each in order', async () => {
      const { store, calls } = fakeStore(() => null);
      store.completeAndClaim = async () => {
        throw new Error('not called when completeAndClaimMany is offered');
      };
      store.completeAndClaimMany = async (items) => {
        calls.push(items.map((i) => i.claim.agentId));
        return items.map((i) => answer(i.complete, i.claim));
      };
      const w = createWriteBatcher(store);
      const [a, b] = await Promise.all([
        w.completeAndClaim(done('agt_a', 1), claim('agt_a')),
        w.completeAndClaim(done('agt_b', 2), claim('agt_b')),
      ]);
      expect(calls).toEqual([['agt_a', 'agt_b']]);
      expect(a.completed).toMatchObject([{ ok: false, code: 'agt_a:1' }]);
      expect(b.completed).toMatchObject([{ ok: false, code: 'agt_b:2' }]);
    });

    it('sends each request alone to completeAndClaim when the store has no batch form', async () => {
      const { store, calls } = fakeStore(() => null);
      store.completeAndClaim = async (complete, c) => {
        calls.push([c.agentId]);
        return answer(complete, c);
      };
      const w = createWriteBatcher(store);
      const [a, b] = await Promise.all([
        w.completeAndClaim(done('agt_a', 1), claim('agt_a')),
        w.completeAndClaim(done('agt_b', 2), claim('agt_b')),
      ]);
      expect(calls).toEqual([['agt_a'], ['agt_b']]);
      expect([a.completed, b.completed]).toMatchObject([
        [{ ok: false, code: 'agt_a:1' }],
        [{ ok: false, code: 'agt_b:2' }],
      ]);
    });

    it('retries a failed batch request by request, so only the bad one fails', async () => {
      const { store, calls } = fakeStore(() => null);
      store.completeAndClaimMany = async (items) => {
        calls.push(items.map((i) => i.claim.agentId));
        if (items.some((i) => i.claim.agentId === 'agt_bad')) throw new RouseError('conflict', 'bad');
        return items.map((i) => answer(i.complete, i.claim));
      };
      const w = createWriteBatcher(store);
      const [good, bad] = await Promise.allSettled([
        w.completeAndClaim(done('agt_a', 1), claim('agt_a')),
        w.completeAndClaim(done('agt_bad', 2), claim('agt_bad')),
      ]);
      expect(good).toMatchObject({ status: 'fulfilled', value: { completed: [{ code: 'agt_a:1' }] } });
      expect(bad).toMatchObject({ status: 'rejected', reason: { code: 'conflict' } });
      expect(calls).toEqual([['agt_a', 'agt_bad'], ['agt_a'], ['agt_bad']]);
    });
  });
});
