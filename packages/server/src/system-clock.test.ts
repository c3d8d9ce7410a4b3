import { describe, expect, it } from 'vitest';
import { systemClock } from './system-clock.js';

describe('systemClock', () => {
  it('a delay past the setTimeout limit does not fire at once (no 1 ms spin for far-off deadlines)', async () => {
    const clock = systemClock();
    let fired = 0;
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const handle = clock.setTimer(40 * 24 * 3600 * 1000, () => fired++);
    await new Promise((r) => setTimeout(r, 30));
    handle.cancel();
    process.off('warning', onWarning);
    expect(fired).toBe(0);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });

  it('fires a short timer and can cancel one', async () => {
    const clock = systemClock();
    const fired: string[] = [];
    clock.setTimer(1, () => fired.push('a'));
    clock.setTimer(1, () => fired.push('b')).cancel();
    await new Promise((r) => setTimeout(r, 20));
    expect(fired).toEqual(['a']);
  });
});
