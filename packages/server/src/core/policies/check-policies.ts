/**
 * Checking a policy file's text without applying it (`POST /v1/policies/check`, `rouse policy check`),
 * and the one-line form of an error that editors and terminals read (`file:line:column: field: message`).
 */
import type { CheckPoliciesResponse, PolicyError } from '@rouse/protocol';
import { parsePolicies } from './load-policies.js';

export function checkPolicies(source: string, file: string): CheckPoliciesResponse {
  const parsed = parsePolicies(source, file);
  return parsed.ok
    ? { valid: true, errors: [], policies: parsed.set.views() }
    : { valid: false, errors: parsed.errors, policies: [] };
}

export function formatPolicyError(e: PolicyError): string {
  const where = e.line > 0 ? `${e.file}:${e.line}:${e.column}` : e.file;
  return `${where}: ${e.path === '' ? '' : `${e.path}: `}${e.message}`;
}
