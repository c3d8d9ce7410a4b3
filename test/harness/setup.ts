/**
 * Runs in every test file (vitest `setupFiles`): after the file, any child process still alive is
 * killed and the file fails — a test must stop what it starts. Temp dirs are removed.
 */
import { afterAll } from 'vitest';
import { assertNoLeakedProcesses } from './processes.js';
import { removeTempDirs } from './temp-dir.js';

afterAll(async () => {
  try {
    await assertNoLeakedProcesses();
  } finally {
    removeTempDirs();
  }
});
