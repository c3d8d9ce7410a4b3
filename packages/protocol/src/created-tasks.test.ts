import { describe, expect, it } from 'vitest';
import {
  type CreateTasksMinimalResponse,
  freshTask,
  minimalCreatedReply,
  requestedFields,
  tasksFromMinimalReply,
} from './created-tasks.js';
import type { CreateTaskRequest, Task, Timing } from './task.js';

const TIMING: Timing = {
  heartbeatIntervalMs: 5000,
  heartbeatTimeoutMs: 15000,
  claimTimeoutMs: 30000,
  executionTimeoutMs: null,
  attemptDeadlineMs: null,
  stallTimeoutMs: 300000,
};

let n = 0;
/** The task a coordinator would create for `req`, with these decisions. */
function created(req: CreateTaskRequest, maxAttempts = 4, timing: Timing = TIMING): Task {
  n++;
  return freshTask(requestedFields(req), {
    id: `tsk_${n}`,
    maxAttempts,
    timing,
    createdAt: 1000 + n,
    runAt: req.runAt ?? 1000 + n,
  });
}

/** The answer as it travels: through JSON. */
const wire = (reply: CreateTasksMinimalResponse) =>
  JSON.parse(JSON.stringify(reply)) as CreateTasksMinimalResponse;

describe('minimal batch answers', () => {
  it('round-trips created tasks, their own timing and attempts, and matched tasks in full', () => {
    const reqs: CreateTaskRequest[] = [
      { type: 'a', payload: { x: 1 } },
      { type: 'a', payload: { x: 2 }, labels: { k: 'v' }, requires: ['db'], priority: 3, resumable: true },
      { type: 'a', maxAttempts: 9 },
      { type: 'b', runAt: 5000, idempotencyKey: 'key' },
      { type: 'a', timing: { heartbeatIntervalMs: 1000 } },
      { type: '__proto__' },
      { type: 'constructor', idempotencyKey: 'old' },
    ];
    const withBackoff = { ...TIMING, backoff: { baseMs: 10, capMs: 100, jitter: 0 } };
    const tasks = [
      created(reqs[0]!),
      created(reqs[1]!),
      created(reqs[2]!, 9),
      created(reqs[3]!, 4, withBackoff),
      created(reqs[4]!, 4, { ...TIMING, heartbeatIntervalMs: 1000, heartbeatTimeoutMs: 3000 }),
      created(reqs[5]!),
      { ...created(reqs[6]!), status: 'completed' as const, result: 'done', version: 3 },
    ];
    const reply = minimalCreatedReply(tasks.map((task, i) => ({ task, deduplicated: i === 6 })));
    expect(reply.tasks[0]).toEqual({
      id: tasks[0]!.id,
      createdAt: tasks[0]!.createdAt,
      runAt: tasks[0]!.runAt,
    });
    expect(reply.tasks[2]).toMatchObject({ maxAttempts: 9, timing: TIMING });
    expect(reply.tasks[6]).toBe(tasks[6]);
    expect(Object.keys(reply.types)).toEqual(['a', 'b', '__proto__']);
    expect(tasksFromMinimalReply(reqs, wire(reply))).toEqual(tasks);
  });

  it('a backoff that differs makes a task carry its own timing', () => {
    const reqs: CreateTaskRequest[] = [{ type: 'a' }, { type: 'a' }];
    const tasks = [
      created(reqs[0]!, 4, { ...TIMING, backoff: { baseMs: 1, capMs: 2, jitter: 0 } }),
      created(reqs[1]!, 4, { ...TIMING, backoff: { baseMs: 1, capMs: 3, jitter: 0 } }),
    ];
    const reply = minimalCreatedReply(tasks.map((task) => ({ task, deduplicated: false })));
    expect(reply.tasks[1]).toHaveProperty('timing.backoff.capMs', 3);
    expect(tasksFromMinimalReply(reqs, wire(reply))).toEqual(tasks);
  });

  it('gives each rebuilt task its own copies, and payloads as JSON carries them', () => {
    const labels = { k: 'v' };
    const payload = { at: new Date(0), skip: undefined, n: Number.NaN };
    const reqs = [{ type: 'a', labels, payload }, { type: 'a' }] as unknown as CreateTaskRequest[];
    const tasks = reqs.map((r) => created(r));
    const [one, two] = tasksFromMinimalReply(
      reqs,
      wire(minimalCreatedReply(tasks.map((task) => ({ task, deduplicated: false })))),
    );
    expect(one!.payload).toEqual({ at: '1970-01-01T00:00:00.000Z', n: null });
    expect(one!.labels).not.toBe(labels);
    expect(one!.timing).not.toBe(two!.timing);
    expect(two!.payload).toBeNull();
  });

  it('refuses an answer that cannot be the answer to the request', () => {
    const reqs: CreateTaskRequest[] = [{ type: 'a' }, { type: 'b' }];
    const tasks = reqs.map((r) => created(r));
    const reply = wire(minimalCreatedReply(tasks.map((task) => ({ task, deduplicated: false }))));
    expect(() => tasksFromMinimalReply(reqs.slice(1), reply)).toThrow('the answer has 2 tasks for 1 created');
    expect(() => tasksFromMinimalReply([reqs[0]!, { type: 'c' }], reply)).toThrow(
      'tasks[1] is neither a task nor a created task of type c',
    );
    expect(() =>
      tasksFromMinimalReply(reqs, { ...reply, tasks: [reply.tasks[0]!, { id: 'x' } as never] }),
    ).toThrow(/tasks\[1\]/);
    expect(() => tasksFromMinimalReply(reqs, { tasks: null } as never)).toThrow(
      'the answer has no tasks for 2 created',
    );
  });
});
