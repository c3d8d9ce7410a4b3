import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { cpuTimeMs, runQueueWaitMs } from './proc.js';

describe.runIf(process.platform === 'linux')('process measurements from /proc', () => {
  it("reads a live process's run-queue wait, which only grows, and null once the process is gone", async () => {
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 300; while (Date.now() < end);']);
    const pid = child.pid as number;
    const first = runQueueWaitMs(pid);
    expect(first).not.toBeNull();
    expect(first).toBeGreaterThanOrEqual(0);
    const mine = runQueueWaitMs(process.pid) as number;
    const end = Date.now() + 50;
    while (Date.now() < end);
    expect(runQueueWaitMs(process.pid)).toBeGreaterThanOrEqual(mine);
    await once(child, 'exit');
    expect(runQueueWaitMs(pid)).toBeNull();
    expect(cpuTimeMs(pid)).toBeNull();
  });
});
