/**
 * What an agent says about itself when it registers, shared by the Worker and the Monitor: its slot
 * `key` (the supervisor passes `ROUSE_AGENT_KEY` to its children), the supervisor that runs it
 * (`ROUSE_SUPERVISOR_ID`) and the dependencies it needs. The environment is read when options are
 * resolved, never at import.
 */
import { InvalidOptionError } from '../errors.js';

export interface AgentIdentityOptions {
  /**
   * Stable slot name (`host-3/reviewer-2`): registering again with the same key and agent type gives the
   * same agent id with the next incarnation, and fences off the previous process.
   * @default env `ROUSE_AGENT_KEY`, else none (every start is a new agent)
   */
  key?: string;
  /** Dependencies this agent needs (names as in its dependency reports). @default [] */
  requires?: string[];
}

export interface ResolvedAgentIdentity {
  key: string | undefined;
  /** From env `ROUSE_SUPERVISOR_ID` (set by `rouse supervise`). */
  supervisorId: string | undefined;
  requires: string[];
}

const KEY = /^[A-Za-z0-9_.:/@-]{1,256}$/;
const DEPENDENCY = /^[A-Za-z0-9_.:/-]{1,128}$/;

export function resolveAgentIdentity(
  o: AgentIdentityOptions,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedAgentIdentity {
  const key = o.key ?? (env.ROUSE_AGENT_KEY || undefined);
  if (key !== undefined && (typeof key !== 'string' || !KEY.test(key))) {
    throw new InvalidOptionError(
      o.key === undefined ? 'ROUSE_AGENT_KEY' : 'key',
      'must be 1-256 characters of letters, digits, _ . : / @ -',
      key,
    );
  }
  const requires = o.requires ?? [];
  if (!Array.isArray(requires) || requires.length > 32 || requires.some((r) => !DEPENDENCY.test(r))) {
    throw new InvalidOptionError(
      'requires',
      'must list at most 32 dependency names of 1-128 letters, digits, _ . : / -',
      requires,
    );
  }
  const supervisorId = env.ROUSE_SUPERVISOR_ID || undefined;
  if (supervisorId !== undefined && supervisorId.length > 256) {
    throw new InvalidOptionError('ROUSE_SUPERVISOR_ID', 'must be at most 256 characters', supervisorId);
  }
  return { key, supervisorId, requires: [...requires] };
}
