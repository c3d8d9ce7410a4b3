/**
 * Checks across a policy file that no single field's schema can make: policy names and agent types
 * unique, at most one `"*"` policy, the built-in policy's name kept for it, and every channel an
 * alert rung names defined under `channels:`. They read the file's raw data and skip what is
 * malformed (the schema reports that), so a file gets these errors and the schema's together.
 */
import { BUILT_IN_POLICY_NAME } from './policy-defaults.js';
import type { FileIssue } from './policy-issues.js';
import { hint } from './policy-issues.js';

/** Where an earlier occurrence was, for "first at line N" in messages. */
export type LineOf = (path: (string | number)[]) => number;

export function checkPolicyFile(data: unknown, lineOf: LineOf): FileIssue[] {
  if (!isObject(data)) return [];
  const issues: FileIssue[] = [];
  const policies = Array.isArray(data.policies) ? data.policies : [];
  const channels = isObject(data.channels) ? Object.keys(data.channels) : [];
  const names = new Map<string, number>();
  const types = new Map<string, number>();

  policies.forEach((p: unknown, i) => {
    if (!isObject(p)) return;
    const name = typeof p.name === 'string' ? p.name : null;
    const type = typeof p.agent_type === 'string' ? p.agent_type : null;
    if (name !== null) {
      const first = names.get(name);
      if (first !== undefined) {
        issues.push({
          path: ['policies', i, 'name'],
          message: `duplicate policy name ${JSON.stringify(name)} (first at line ${lineOf(['policies', first, 'name'])})`,
        });
      } else names.set(name, i);
      if (name === BUILT_IN_POLICY_NAME && type !== null && type !== '*') {
        issues.push({
          path: ['policies', i, 'name'],
          message: `${JSON.stringify(BUILT_IN_POLICY_NAME)} names the built-in policy for every other agent type: give this policy another name, or agent_type "*"`,
        });
      }
    }
    if (type !== null) {
      const first = types.get(type);
      if (first !== undefined) {
        const firstName = (policies[first] as Record<string, unknown>).name;
        const where = `line ${lineOf(['policies', first, 'agent_type'])}`;
        issues.push({
          path: ['policies', i, 'agent_type'],
          message:
            type === '*'
              ? `a second "*" policy: "*" (every other agent type) may have one policy only (the first: ${JSON.stringify(firstName)}, ${where})`
              : `agent type ${JSON.stringify(type)} already has policy ${JSON.stringify(firstName)} (${where}): one policy per agent type`,
        });
      } else types.set(type, i);
    }
    checkAlertChannels(p, i, channels, issues);
  });
  return issues;
}

function checkAlertChannels(
  policy: Record<string, unknown>,
  i: number,
  defined: string[],
  out: FileIssue[],
): void {
  const rungs = Array.isArray(policy.recovery_actions) ? policy.recovery_actions : [];
  rungs.forEach((rung: unknown, j) => {
    if (!isObject(rung) || rung.action !== 'alert' || !Array.isArray(rung.channels)) return;
    rung.channels.forEach((c: unknown, k) => {
      if (typeof c !== 'string' || defined.includes(c)) return;
      const known =
        defined.length === 0 ? 'the file defines none' : `defined: ${defined.join(', ')}${hint(c, defined)}`;
      out.push({
        path: ['policies', i, 'recovery_actions', j, 'channels', k],
        message: `names channel ${JSON.stringify(c)}, which is not defined under channels: (${known})`,
      });
    });
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
