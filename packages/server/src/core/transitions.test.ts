import { TASK_STATUSES, type TaskStatus } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { InvalidTransitionError } from './errors.js';
import { assertTransition, canTransition, isFinal, sourcesOf } from './transitions.js';

// The table of docs/design.md §2, written out independently of the implementation.
const ALLOWED = new Set([
  'created>claimed',
  'created>cancelled',
  'claimed>running',
  'claimed>timeout',
  'claimed>cancelled',
  'running>completed',
  'running>failed',
  'running>timeout',
  'running>cancelled',
  'timeout>claimed',
  'timeout>cancelled',
  'failed>claimed',
  'failed>cancelled',
]);

describe('transition table', () => {
  it('allows exactly the 13 transitions of the design, nothing else', () => {
    let allowed = 0;
    for (const from of TASK_STATUSES) {
      for (const to of TASK_STATUSES) {
        const expected = ALLOWED.has(`${from}>${to}`);
        expect(canTransition(from, to), `${from} → ${to}`).toBe(expected);
        if (expected) allowed++;
      }
    }
    expect(allowed).toBe(ALLOWED.size);
  });

  it('assertTransition throws invalid_transition naming from and to', () => {
    expect(() => assertTransition('tsk_1', 'completed', 'running')).toThrow(InvalidTransitionError);
    try {
      assertTransition('tsk_1', 'created', 'completed');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidTransitionError);
      const e = err as InvalidTransitionError;
      expect(e.code).toBe('invalid_transition');
      expect(e.status).toBe(409);
      expect(e.details).toMatchObject({ from: 'created', to: 'completed' });
    }
    expect(() => assertTransition('tsk_1', 'created', 'claimed')).not.toThrow();
  });

  it('lists the sources of a state', () => {
    expect(sourcesOf('claimed').sort()).toEqual(['created', 'failed', 'timeout']);
    expect(sourcesOf('created')).toEqual([]);
  });

  it('final: completed and cancelled always; failed and timeout only without a next attempt', () => {
    const cases: [TaskStatus, number | null, boolean][] = [
      ['completed', null, true],
      ['cancelled', null, true],
      ['failed', null, true],
      ['failed', 5, false],
      ['timeout', null, true],
      ['timeout', 5, false],
      ['created', null, false],
      ['claimed', null, false],
      ['running', null, false],
    ];
    for (const [status, next, final] of cases) expect(isFinal(status, next), status).toBe(final);
  });
});
