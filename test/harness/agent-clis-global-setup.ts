/**
 * vitest `globalSetup`: the pinned coding-agent CLIs the adapter tests run (agent-clis.ts), installed
 * into the test cache before any test starts when they are not there yet. A failed install does not
 * stop the run: the tests that need a CLI then fail, naming the cause.
 */
import { ensureAgentClis } from './agent-clis.js';

export default function setup(): void {
  try {
    ensureAgentClis((line) => process.stdout.write(`${line}\n`));
  } catch (err) {
    process.stderr.write(`agent CLIs: ${(err as Error).message}\n`);
  }
}
