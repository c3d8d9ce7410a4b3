/**
 * Entry point of `npm run bench` (`node packages/bench/dist/main.js [options]`); see
 * `run-bench.ts` for the options and what is measured.
 */
import { runBench } from './run-bench.js';

runBench(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // A report must not hang CI on a stray handle (a socket a server forgot to close).
    setTimeout(() => process.exit(code), 2000).unref();
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
