/**
 * The supervisor's config file (`rouse supervise -c host.yaml`, docs/design.md §6.6), in the policy
 * file's units (durations: seconds or `500ms`, `30s`, `5m`): `HostConfig` as written →
 * `parseHostConfig()` → `ResolvedHostConfig` with every default filled in. Every error names the file
 * and the field (`host.yaml: programs.0.restart.backoff: …`); unknown keys are errors.
 */

import { parseDuration } from '@rouse/protocol';
import { agentKey, name as nameSchema, signalName } from '@rouse/protocol/schemas';
import { parse as parseYaml } from 'yaml';
import type { RestartPolicy } from './restart-rules.js';

export interface ResolvedProgram {
  name: string;
  /** The executable and its arguments (a string command runs as `/bin/sh -c <command>`). */
  command: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  instances: number;
  /** @default the program's name */
  agentType: string;
  /**
   * Whether the program uses the SDK (registers and heartbeats itself). A plain program (`sdk: false`,
   * implied by `progress`) is registered by the supervisor, whose heartbeat stands for it.
   * @default true, false when `progress` is given
   */
  sdk: boolean;
  restart: RestartPolicy;
  stop: { signal: NodeJS.Signals; graceMs: number };
  /** Sent with a `wake` command (unless the command names its own signal). @default none */
  wakeSignal: NodeJS.Signals | null;
  /** Progress of a plain program read from its output: `done/total` from two groups, a number from one. */
  progressRegex: RegExp | null;
}

export interface ResolvedHostConfig {
  /** The coordinator's URL (`coordinator:`, else `ROUSE_URL`). */
  url: string;
  /** The enrollment token (`ROUSE_AGENT_TOKEN`): the supervisor's and its children's. */
  token: string;
  /** One live supervisor per name; children's keys are `<name>/<program>-<instance>`. */
  name: string;
  programs: ResolvedProgram[];
}

/** Defaults of a program's `restart` and `stop` (docs/design.md §6.6). */
export const PROGRAM_DEFAULTS: Readonly<{
  restart: Readonly<RestartPolicy>;
  stop: Readonly<ResolvedProgram['stop']>;
}> = {
  restart: {
    backoffMs: 1000,
    maxBackoffMs: 5 * 60_000,
    resetAfterMs: 10 * 60_000,
    budget: 5,
    windowMs: 10 * 60_000,
  },
  stop: { signal: 'SIGTERM', graceMs: 15_000 },
};

export class HostConfigError extends Error {
  constructor(
    readonly file: string,
    readonly errors: { path: string; message: string }[],
  ) {
    super(errors.map((e) => `${file}: ${e.path === '' ? '' : `${e.path}: `}${e.message}`).join('\n'));
    this.name = 'HostConfigError';
  }
}

type Raw = Record<string, unknown>;

/** Parse and check a config file's text; throws {@link HostConfigError} naming every bad field. */
export function parseHostConfig(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedHostConfig {
  const errors: { path: string; message: string }[] = [];
  const err = (path: string, message: string) => {
    errors.push({ path, message });
  };
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new HostConfigError(file, [{ path: '', message: `not valid YAML: ${(e as Error).message}` }]);
  }
  if (!isObject(doc))
    throw new HostConfigError(file, [{ path: '', message: 'must be a mapping with name and programs' }]);
  only(doc, ['coordinator', 'name', 'programs'], '', err);

  const url = doc.coordinator ?? env.ROUSE_URL;
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) {
    err('coordinator', 'must be the coordinator URL (http://host:port), or set ROUSE_URL');
  }
  const token = env.ROUSE_AGENT_TOKEN ?? '';
  if (token === '') err('', 'the enrollment token is read from ROUSE_AGENT_TOKEN, which is not set');
  const name = doc.name;
  if (
    typeof name !== 'string' ||
    !agentKey.safeParse(name).success ||
    name.includes('/') ||
    name.length > 100
  ) {
    err(
      'name',
      'must be 1-100 letters, digits and _ . : @ - (no /): the supervisor name, one live supervisor each',
    );
  }
  const programs: ResolvedProgram[] = [];
  if (!Array.isArray(doc.programs) || doc.programs.length === 0) {
    err('programs', 'must list at least one program');
  } else {
    const seen = new Set<string>();
    doc.programs.forEach((p, i) => {
      const resolved = program(p, `programs.${i}`, err, () => errors.length);
      if (resolved === null) return;
      if (seen.has(resolved.name)) err(`programs.${i}.name`, `"${resolved.name}" is used twice`);
      seen.add(resolved.name);
      programs.push(resolved);
    });
  }
  if (errors.length > 0) throw new HostConfigError(file, errors);
  return { url: (url as string).replace(/\/+$/, ''), token, name: name as string, programs };
}

function program(
  p: unknown,
  at: string,
  err: (path: string, message: string) => void,
  count: () => number,
): ResolvedProgram | null {
  if (!isObject(p)) {
    err(at, 'must be a mapping with name and command');
    return null;
  }
  only(
    p,
    [
      'name',
      'command',
      'args',
      'cwd',
      'env',
      'instances',
      'agent_type',
      'sdk',
      'restart',
      'stop',
      'wake_signal',
      'progress',
    ],
    at,
    err,
  );
  const before = count();
  const name = p.name;
  if (typeof name !== 'string' || !nameSchema.safeParse(name).success || name.includes('/')) {
    err(`${at}.name`, 'must be 1-128 letters, digits and _ . : - (no /)');
  }
  let command: string[] = [];
  const args = p.args;
  if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))) {
    err(`${at}.args`, 'must be a list of strings');
  }
  if (typeof p.command === 'string' && p.command.trim() !== '') {
    if (args !== undefined) err(`${at}.args`, 'goes with a command list, not a shell string');
    command = ['/bin/sh', '-c', p.command];
  } else if (
    Array.isArray(p.command) &&
    p.command.length > 0 &&
    p.command.every((c) => typeof c === 'string' && c !== '')
  ) {
    command = [...(p.command as string[]), ...((Array.isArray(args) ? args : []) as string[])];
  } else {
    err(`${at}.command`, 'must be a list such as ["node", "agent.js"], or a string run by /bin/sh');
  }
  if (p.cwd !== undefined && typeof p.cwd !== 'string') err(`${at}.cwd`, 'must be a directory path');
  const env: Record<string, string> = {};
  if (p.env !== undefined) {
    if (!isObject(p.env)) err(`${at}.env`, 'must be a mapping of names to values');
    else
      for (const [k, v] of Object.entries(p.env)) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') env[k] = String(v);
        else err(`${at}.env.${k}`, 'must be a string, number or boolean');
      }
  }
  const instances = p.instances ?? 1;
  if (!Number.isInteger(instances) || (instances as number) < 1 || (instances as number) > 10_000) {
    err(`${at}.instances`, 'must be an integer from 1 to 10000');
  }
  const agentType = p.agent_type ?? name;
  if (typeof agentType !== 'string' || !nameSchema.safeParse(agentType).success) {
    err(`${at}.agent_type`, 'must be 1-128 letters, digits and _ . : / -');
  }
  if (p.sdk !== undefined && typeof p.sdk !== 'boolean') err(`${at}.sdk`, 'must be true or false');

  const restart: RestartPolicy = { ...PROGRAM_DEFAULTS.restart };
  if (p.restart !== undefined) {
    if (!isObject(p.restart)) err(`${at}.restart`, 'must be a mapping');
    else {
      only(p.restart, ['backoff', 'max_backoff', 'reset_after', 'budget', 'window'], `${at}.restart`, err);
      const fields = [
        ['backoff', 'backoffMs'],
        ['max_backoff', 'maxBackoffMs'],
        ['reset_after', 'resetAfterMs'],
        ['window', 'windowMs'],
      ] as const;
      for (const [key, to] of fields) {
        if (p.restart[key] === undefined) continue;
        const d = parseDuration(p.restart[key]);
        if (!d.ok) err(`${at}.restart.${key}`, d.message);
        else if (d.value < 1) err(`${at}.restart.${key}`, 'must be at least 1ms');
        else restart[to] = d.value;
      }
      if (p.restart.budget !== undefined) {
        if (!Number.isInteger(p.restart.budget) || (p.restart.budget as number) < 0) {
          err(`${at}.restart.budget`, 'must be an integer >= 0 (restarts allowed within window)');
        } else restart.budget = p.restart.budget as number;
      }
      if (restart.maxBackoffMs < restart.backoffMs)
        err(`${at}.restart.max_backoff`, 'must be at least backoff');
    }
  }
  const stop: ResolvedProgram['stop'] = { ...PROGRAM_DEFAULTS.stop };
  if (p.stop !== undefined) {
    if (!isObject(p.stop)) err(`${at}.stop`, 'must be a mapping');
    else {
      only(p.stop, ['signal', 'grace'], `${at}.stop`, err);
      if (p.stop.signal !== undefined) {
        if (!isSignal(p.stop.signal)) err(`${at}.stop.signal`, 'must be a signal name such as SIGTERM');
        else stop.signal = p.stop.signal;
      }
      if (p.stop.grace !== undefined) {
        const d = parseDuration(p.stop.grace);
        if (!d.ok) err(`${at}.stop.grace`, d.message);
        else stop.graceMs = d.value;
      }
    }
  }
  let wakeSignal: NodeJS.Signals | null = null;
  if (p.wake_signal !== undefined) {
    if (!isSignal(p.wake_signal)) err(`${at}.wake_signal`, 'must be a signal name such as SIGUSR1');
    else wakeSignal = p.wake_signal;
  }
  let progressRegex: RegExp | null = null;
  if (p.progress !== undefined) {
    if (!isObject(p.progress)) err(`${at}.progress`, 'must be a mapping with output_regex');
    else {
      only(p.progress, ['output_regex'], `${at}.progress`, err);
      if (typeof p.progress.output_regex !== 'string')
        err(`${at}.progress.output_regex`, 'must be a regular expression');
      else
        try {
          progressRegex = new RegExp(p.progress.output_regex);
        } catch (e) {
          err(`${at}.progress.output_regex`, `is not a valid regular expression: ${(e as Error).message}`);
        }
    }
  }
  if (p.sdk === true && p.progress !== undefined) {
    err(`${at}.progress`, 'is for plain programs (sdk: false); an SDK program reports its own progress');
  }
  if (count() !== before) return null;
  return {
    name: name as string,
    command,
    cwd: p.cwd as string | undefined,
    env,
    instances: instances as number,
    agentType: agentType as string,
    sdk: (p.sdk as boolean | undefined) ?? p.progress === undefined,
    restart,
    stop,
    wakeSignal,
    progressRegex,
  };
}

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isSignal(v: unknown): v is NodeJS.Signals {
  return typeof v === 'string' && signalName.safeParse(v).success;
}

function only(
  o: Raw,
  keys: readonly string[],
  at: string,
  err: (path: string, message: string) => void,
): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k))
      err(at === '' ? k : `${at}.${k}`, `is not a known key (known: ${keys.join(', ')})`);
  }
}
