#!/usr/bin/env node
/**
 * `npm test`: build (typechecks the sources), typecheck the tests, lint, then every vitest test. The last line printed is
 * `N passed, N failed` (plus `, N skipped` when some were skipped), from vitest's JSON report.
 * Exits non-zero if the build, the lint or any test failed. Extra arguments go to vitest. Installs
 * Debian's chromium first when it is missing and this user may (the dashboard's browser tests need it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const say = (line) => process.stdout.write(`${line}\n`);
const warn = (line) => process.stderr.write(`${line}\n`);
const run = (cmd, args) => spawnSync(cmd, args, { cwd: root, stdio: 'inherit' }).status ?? 1;

if (run(npm, ['run', '--silent', 'build']) !== 0) {
  warn('build (typecheck) failed: no tests were run');
  process.exit(1);
}
// The packages' build typechecks the sources; this typechecks the tests and the e2e harness.
const typecheckStatus = run(npm, ['run', '--silent', 'typecheck']);
if (typecheckStatus !== 0) warn('typecheck of the tests failed (running the tests anyway)');
const lintStatus = run(npm, ['run', '--silent', 'lint']);
if (lintStatus !== 0) warn('lint failed (running the tests anyway)');

// The dashboard's tests drive a real browser: Debian's chromium. On a machine without it, install it
// when this user can (root, or sudo without a password); otherwise those tests fail naming the fix.
const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
if (process.platform === 'linux' && !onPath('chromium') && onPath('apt-get')) {
  const isRoot = process.getuid?.() === 0;
  const aptGet = isRoot
    ? ['apt-get']
    : spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0
      ? ['sudo', '-n', 'apt-get']
      : null;
  if (aptGet === null) {
    warn(
      'chromium is not installed and this user cannot install it: the dashboard tests will fail (apt-get install chromium)',
    );
  } else {
    say('installing chromium for the dashboard tests (apt-get; once)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const apt = (args) =>
      spawnSync(aptGet[0], [...aptGet.slice(1), ...args], { stdio: 'inherit', env }).status;
    if (apt(['update']) !== 0 || apt(['install', '-y', '--no-install-recommends', 'chromium']) !== 0) {
      warn('could not install chromium: the dashboard tests will fail');
    }
  }
}

const report = join(root, 'test-results.json');
rmSync(report, { force: true });
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const testStatus = run(process.execPath, [
  vitest,
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);

if (!existsSync(report)) {
  warn('vitest wrote no report');
  say('0 passed, 0 failed');
  process.exit(1);
}
const r = JSON.parse(readFileSync(report, 'utf8'));
const passed = r.numPassedTests ?? 0;
const failed = r.numFailedTests ?? 0;
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
if ((r.numFailedTestSuites ?? 0) > 0) warn(`${r.numFailedTestSuites} test file(s) failed`);
if (typecheckStatus !== 0) warn('typecheck of the tests failed');
if (lintStatus !== 0) warn('lint failed');
say(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(testStatus !== 0 || failed > 0 || lintStatus !== 0 || typecheckStatus !== 0 ? 1 : 0);
