/** The metrics fed from the event stream: interventions, acknowledgement times, task timeouts and durations. */
import type { Intervention, StreamEvent, Task } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { ApiMetrics } from './metrics.js';

const intervention = (over: Partial<Intervention>): Intervention => ({
  id: 'itv_1',
  agentId: 'agt_1',
  incarnation: 1,
  taskId: null,
  condition: 'progress_stalled',
  action: 'wake',
  rung: 0,
  attempt: 1,
  state: 'pending',
  reason: 'r',
  evidence: {},
  actor: 'coordinator:c',
  commandId: 'cmd_1',
  coordinatorId: 'c',
  shardEpoch: 1,
  startedAt: 1000,
  endedAt: null,
  ...over,
});

const transition = (to: 'completed' | 'timeout', reason: string, task: Partial<Task>): StreamEvent =>
  ({
    type: 'task.transition',
    at: 5000,
    task: { id: 'tsk_1', type: 'build', startedAt: 2000, ...task },
    event: { seq: 3, at: 5000, from: 'running', to, reason, actor: 'x', version: 3, attempt: 1 },
  }) as unknown as StreamEvent;

describe('ApiMetrics from events', () => {
  it('counts ended interventions by action, state and trigger, and times each acknowledgement once', () => {
    const m = new ApiMetrics();
    const acked = intervention({
      evidence: { conditionSince: 1000, wakeAck: { outcome: 'done', at: 1250 } },
    });
    m.onEvent({ type: 'intervention', at: 1250, intervention: acked });
    // The same acknowledgement in a later event is not timed again.
    m.onEvent({
      type: 'intervention',
      at: 1300,
      intervention: { ...acked, state: 'succeeded', endedAt: 1300 },
    });
    m.onEvent({
      type: 'intervention',
      at: 1400,
      intervention: intervention({ id: 'itv_2', condition: 'manual', action: 'terminate', state: 'failed' }),
    });
    expect(
      m.value('rouse_interventions_total', { action: 'wake', state: 'succeeded', trigger: 'ladder' }),
    ).toBe(1);
    expect(
      m.value('rouse_interventions_total', { action: 'terminate', state: 'failed', trigger: 'manual' }),
    ).toBe(1);
    const text = m.render();
    expect(text).toContain('rouse_intervention_ack_seconds_count 1');
    expect(text).toContain('rouse_intervention_ack_seconds_sum 0.25');
    expect(text).toContain('rouse_intervention_ack_seconds_bucket{le="0.25"} 1');
    expect(text).toContain('rouse_intervention_ack_seconds_bucket{le="0.1"} 0');
  });

  it('counts timeouts by reason and observes attempt durations by task type', () => {
    const m = new ApiMetrics();
    m.onEvent(transition('timeout', 'agent_reassigned', {}));
    m.onEvent(transition('timeout', 'heartbeat_timeout', {}));
    m.onEvent(transition('completed', 'completed', { type: 'build' }));
    expect(m.value('rouse_task_timeouts_total', { reason: 'agent_reassigned' })).toBe(1);
    expect(m.value('rouse_task_timeouts_total', { reason: 'heartbeat_timeout' })).toBe(1);
    const text = m.render();
    expect(text).toContain('rouse_task_duration_seconds_bucket{type="build",le="2.5"} 0');
    expect(text).toContain('rouse_task_duration_seconds_bucket{type="build",le="5"} 1');
    expect(text).toContain('rouse_task_duration_seconds_count{type="build"} 1');
  });
});
