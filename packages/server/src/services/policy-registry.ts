/**
 * The policies in force (docs/design.md §6.3): loaded from the policy file at start, and hot-reloaded —
 * the file is looked at every `pollMs`; a valid change applies at once, an invalid one is refused
 * with every error logged by file, line and field, and the policies in force stay. Without a file
 * the built-in defaults apply. A file that appears later (the data directory's `policies.yaml`) is
 * picked up like a change.
 */
import { readFile, stat } from 'node:fs/promises';
import type { PoliciesResponse } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.js';
import { RouseError } from '../core/errors.js';
import { formatPolicyError } from '../core/policies/check-policies.js';
import { parsePolicies } from '../core/policies/load-policies.js';
import { DEFAULT_POLICY_SET, type PolicySet } from '../core/policies/policy-set.js';

export interface PolicyProvider {
  /** The policies in force now. */
  current(): PolicySet;
  /** `GET /v1/policies`: them, where they came from, and the last reload that was refused. */
  response(): PoliciesResponse;
}

export interface PolicyRegistry extends PolicyProvider {
  /** Load the file (a missing optional file: the defaults). Throws `validation_failed` for a bad file. */
  start(): Promise<void>;
  stop(): void;
  /** Look at the file now; true when new policies were taken. */
  reload(): Promise<boolean>;
}

export interface PolicyRegistryOptions {
  /** The policy file, or null: the built-in defaults. */
  file: string | null;
  /** The file may be missing (the data directory's `policies.yaml`): defaults until it appears. */
  optional: boolean;
  clock: Clock;
  logger: Logger;
  /** How often the file is looked at. @default 250 */
  pollMs?: number;
}

/** A provider of fixed policies (the library default: the built-in ones). */
export function fixedPolicies(
  set: PolicySet = DEFAULT_POLICY_SET,
  source: string | null = null,
): PolicyProvider {
  return {
    current: () => set,
    response: () => ({
      source,
      loadedAt: 0,
      policies: set.views(),
      taskTypes: set.taskTypeViews(),
      lastError: null,
    }),
  };
}

export function createPolicyRegistry(options: PolicyRegistryOptions): PolicyRegistry {
  const { file, clock, logger } = options;
  const pollMs = options.pollMs ?? 250;
  let set: PolicySet = DEFAULT_POLICY_SET;
  let source: string | null = null;
  let loadedAt = clock.now();
  let lastError: PoliciesResponse['lastError'] = null;
  /** What the file looked like when last read (mtime, size, inode), to notice changes cheaply. */
  let seen: string | null | undefined;
  let timer: TimerHandle | null = null;
  let stopped = true;

  async function fingerprint(path: string): Promise<string | null> {
    try {
      const s = await stat(path);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async function load(initial: boolean): Promise<boolean> {
    if (file === null) return false;
    const print = await fingerprint(file);
    if (print === seen) return false;
    seen = print;
    if (print === null) {
      if (!options.optional && initial) {
        throw new RouseError('validation_failed', `the policy file ${file} does not exist`, { file });
      }
      if (source !== null || lastError !== null) {
        logger.warn({ file }, 'the policy file is gone; the policies in force stay');
        lastError = fileError(file, 'the file is gone; the policies in force stay until it is back');
      }
      return false;
    }
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if (initial) throw err;
      // A directory now, or no longer readable: said where the policies are read, as a bad file is.
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      lastError = fileError(file, `cannot read the file (${code}); the policies in force stay`);
      logger.error({ err, file }, 'could not read the policy file; the policies in force stay');
      return false;
    }
    const parsed = parsePolicies(text, file);
    if (!parsed.ok) {
      lastError = { at: clock.now(), errors: parsed.errors };
      if (initial) {
        throw new RouseError(
          'validation_failed',
          `the policy file ${file} is not valid:\n${parsed.errors.map(formatPolicyError).join('\n')}`,
          { file, errors: parsed.errors as unknown as Record<string, unknown>[] },
        );
      }
      for (const e of parsed.errors) logger.error({ file, line: e.line, path: e.path }, formatPolicyError(e));
      logger.error({ file, errors: parsed.errors.length }, 'policy file refused; the policies in force stay');
      return false;
    }
    set = parsed.set;
    source = file;
    loadedAt = clock.now();
    lastError = null;
    logger.info(
      { file, policies: set.views().map((p) => p.name) },
      initial ? 'policies loaded' : 'policies reloaded',
    );
    return true;
  }

  /** `lastError` for a problem with the file as a whole (not a line in it). */
  function fileError(path: string, message: string): NonNullable<PoliciesResponse['lastError']> {
    return { at: clock.now(), errors: [{ file: path, line: 0, column: 0, path: '', message }] };
  }

  function schedule(): void {
    if (stopped || file === null) return;
    timer = clock.setTimer(pollMs, () => {
      load(false)
        .catch((err: unknown) => logger.warn({ err, file }, 'could not read the policy file'))
        .finally(schedule);
    });
  }

  return {
    current: () => set,
    response: () => ({
      source,
      loadedAt,
      policies: set.views(),
      taskTypes: set.taskTypeViews(),
      lastError,
    }),
    async start() {
      await load(true);
      stopped = false;
      schedule();
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
    },
    reload: () => load(false),
  };
}
