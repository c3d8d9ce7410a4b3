import { describe, expect, it } from 'vitest';
import { ProgressTally, phaseAfterWakes } from './cli-progress.js';

describe('progress from CLI events', () => {
  it('moves with every turn and completed item, below 1, and counts them in the phase', () => {
    const t = new ProgressTally(1000, 10_000);
    expect(t.apply({ type: 'session', sessionId: 's' }, 0)).toBe(true);
    expect(t.progress(0)).toEqual({ value: 0, phase: 'turn 0 · 0 items · 0 tools' });
    expect(t.apply({ type: 'turn_started' }, 0)).toBe(true);
    const a = t.progress(0);
    expect(t.apply({ type: 'item_completed', kind: 'agent_message' }, 0)).toBe(true);
    const b = t.progress(0);
    expect(b.value).toBeGreaterThan(a.value);
    expect(b.phase).toBe('turn 1 · 1 items · 0 tools');
    expect(t.apply({ type: 'message', text: 'hi' }, 0)).toBe(false);
    for (let i = 0; i < 1000; i++) t.apply({ type: 'item_completed', kind: 'x' }, 0);
    expect(t.progress(0).value).toBe(0.95);
  });

  it('a tool in flight moves the phase by time in ticks, up to the cap, then stops moving', () => {
    const t = new ProgressTally(1000, 5000);
    t.apply({ type: 'tool_started', id: 'c1', name: 'Bash' }, 10_000);
    expect(t.toolTicking(10_500)).toBe(true);
    const p1 = t.progress(11_200).phase;
    const p2 = t.progress(12_300).phase;
    expect(p1).toBe('turn 0 · 0 items · 1 tools · Bash running 1s');
    expect(p2).toBe('turn 0 · 0 items · 1 tools · Bash running 2s');
    expect(t.toolTicking(15_000)).toBe(false);
    expect(t.progress(15_000).phase).toBe(t.progress(99_000).phase);
    expect(t.apply({ type: 'tool_finished', id: 'c1' }, 16_000)).toBe(true);
    expect(t.apply({ type: 'tool_finished', id: 'unknown' }, 16_000)).toBe(false);
    expect(t.progress(16_000).phase).toBe('turn 0 · 0 items · 1 tools');
  });

  it('says how often the run was resumed', () => {
    const t = new ProgressTally(1000, 5000);
    t.resumes = 2;
    t.apply({ type: 'tool_started', id: 'c1', name: 'Bash' }, 0);
    expect(t.progress(0).phase).toBe('turn 0 · 0 items · 1 tools · resumed 2× · Bash running 0s');
    t.endRun();
    expect(t.progress(0).phase).toBe('starting · resumed 2×');
  });

  it('a run is `starting` until the CLI says anything; its first event, whatever it is, moves the progress', () => {
    const t = new ProgressTally(1000, 5000);
    expect(t.progress(0)).toEqual({ value: 0, phase: 'starting' });
    // A session notice alone changes no count, but it is the first sign of life: the stall clock restarts.
    expect(t.apply({ type: 'session', sessionId: 's' }, 0)).toBe(true);
    expect(t.progress(0).phase).toBe('turn 0 · 0 items · 0 tools');
    expect(t.apply({ type: 'session', sessionId: 's' }, 0)).toBe(false);
    t.endRun();
    expect(t.progress(0).phase).toBe('starting');
    expect(t.apply({ type: 'message', text: 'hi' }, 0)).toBe(true);
  });
});

describe('the phase after wakes', () => {
  it('counts the resumes or restarts a wake caused, within 256 characters, the count kept', () => {
    expect(phaseAfterWakes('turn 2 · 5 items · 1 tools', 'resumed', 0)).toBe('turn 2 · 5 items · 1 tools');
    expect(phaseAfterWakes('turn 2 · 5 items · 1 tools', 'resumed', 1)).toBe(
      'turn 2 · 5 items · 1 tools · resumed 1×',
    );
    expect(phaseAfterWakes('compiling', 'restarted', 2)).toBe('compiling · restarted 2×');
    expect(phaseAfterWakes('', 'restarted', 1)).toBe('restarted 1×');
    const long = phaseAfterWakes('x'.repeat(256), 'restarted', 3);
    expect(long).toHaveLength(256);
    expect(long.endsWith('x · restarted 3×')).toBe(true);
    const t = new ProgressTally(1000, 10_000);
    t.resumes = 1;
    expect(t.progress(0).phase).toBe('starting · resumed 1×');
  });
});
