/** The wake's resume prompt: a person's reason reaches the model, the recovery ladder's bookkeeping does not. */
import { LADDER_REASON_PREFIX } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { defaultNudge } from './cli-task.js';

describe('defaultNudge', () => {
  it("passes a person's reason on, and leaves the ladder's out", () => {
    expect(defaultNudge('fix the build', 'you are looping on the same test')).toBe(
      'You were interrupted because you seemed stuck (you are looping on the same test); continue the task: fix the build',
    );
    const ladder = `${LADDER_REASON_PREFIX}progress_stalled (task tsk_1): rung 1 (wake), attempt 1 of 2`;
    expect(defaultNudge('fix the build', ladder)).toBe(
      'You were interrupted because you seemed stuck; continue the task: fix the build',
    );
    expect(defaultNudge('fix the build', undefined)).toBe(
      'You were interrupted because you seemed stuck; continue the task: fix the build',
    );
  });
});
