import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { cpuTimeMs, descendantsCpuMs, runQueueWaitMs } from './proc.js';

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

  it("keeps counting a descendant's CPU time once it has exited and its parent has waited for it", async () => {
    // A parent starts a child that burns 300 ms of CPU, says so and exits; the parent waits for it
    // and stays. Both go by a name of their own (the command name keeps 15 characters).
    const name = `rp${process.pid}`;
    const child = `process.title = '${name}'; while (process.cpuUsage().user < 300_000); process.stdout.write('burnt\\n'); setTimeout(() => {}, 100);`;
    const parent = `process.title = '${name}'; require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: ['ignore', 'inherit', 'inherit'] }).on('exit', () => { process.stdout.write('reaped\\n'); setInterval(() => {}, 1000); });`;
    const proc = spawn(process.execPath, ['-e', parent], { stdio: ['ignore', 'pipe', 'inherit'] });
    const readings: Record<string, number | null> = {};
    const said = new Promise<void>((resolve) => {
      let text = '';
      proc.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        for (const line of ['burnt', 'reaped'])
          if (text.includes(`${line}\n`) && !(line in readings))
            readings[line] = descendantsCpuMs(process.pid, new RegExp(`^${name}$`));
        if ('reaped' in readings) resolve();
      });
    });
    try {
      await said;
    } finally {
      proc.kill('SIGKILL');
    }
    expect(readings.burnt).toBeGreaterThanOrEqual(250);
    // The child's time moved into its parent's: the total did not drop when the child went away.
    expect(readings.reaped).toBeGreaterThanOrEqual(readings.burnt as number);
  });
});
