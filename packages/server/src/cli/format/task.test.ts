import { describe, expect, it } from 'vitest';
import { taskFixture } from '../../test-support/task-fixture.js';
import { formatProgress, taskNote } from './task.js';

const NOW = 1_700_000_100_000;

describe('taskNote of a running task', () => {
  const running = (over: Parameters<typeof taskFixture>[1]) =>
    taskFixture(NOW, { status: 'running', attempt: 1, agentId: 'agt_a', claimedAt: NOW - 20_000, ...over });

  it('tells a recent heartbeat, a fresh start, and an overdue heartbeat apart (1.5 intervals, as rouse why)', () => {
    // heartbeat every 5 s
    expect(taskNote(running({ startedAt: NOW - 20_000, lastHeartbeatAt: NOW - 2_000 }), NOW)).toBe(
      'heartbeat 2s ago',
    );
    expect(taskNote(running({ startedAt: NOW - 3_000 }), NOW)).toBe('started 3s ago');
    expect(taskNote(running({ startedAt: NOW - 20_000, lastHeartbeatAt: NOW - 7_400 }), NOW)).toBe(
      'heartbeat 7.4s ago',
    );
    expect(taskNote(running({ startedAt: NOW - 20_000, lastHeartbeatAt: NOW - 7_600 }), NOW)).toBe(
      'heartbeat late by 2.6s',
    );
    // never heard from since it started
    expect(taskNote(running({ startedAt: NOW - 12_000 }), NOW)).toBe('heartbeat late by 7s');
  });

  it('says a finished execution awaits its write-back', () => {
    expect(taskNote(running({ startedAt: NOW - 30_000, executionDone: true }), NOW)).toBe(
      'execution done, awaiting write-back',
    );
  });
});

describe('formatProgress', () => {
  it('shows what was reported, and a completed task as done whatever was reported last', () => {
    expect(formatProgress({ status: 'running', progress: 0.4, phase: 'tests' })).toBe('40% tests');
    expect(formatProgress({ status: 'running', progress: null, phase: null })).toBe('-');
    expect(formatProgress({ status: 'completed', progress: 0.8, phase: 'step 4' })).toBe(
      'done (last 80% step 4)',
    );
    expect(formatProgress({ status: 'completed', progress: 1, phase: 'report' })).toBe('done');
    expect(formatProgress({ status: 'completed', progress: null, phase: null })).toBe('done');
  });
});
