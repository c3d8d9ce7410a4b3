/**
 * Reading a policy file (docs/design.md §6.3): YAML text → a `PolicySet`, or every error in it, each with
 * the file, line, column, dotted path of the field and what is wrong. A file with a YAML syntax error
 * reports its syntax errors (all of them) and nothing else, since its structure is unknown.
 *
 * An empty file (or one with only comments) is refused: a hot reload that catches a file while an
 * editor rewrites it would otherwise drop every policy in force. `policies: []` asks for the
 * built-in defaults explicitly.
 */
import type { PolicyError } from '@rouse/protocol';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import { checkPolicyFile } from './policy-file-checks.js';
import { collectIssues, type FileIssue } from './policy-issues.js';
import { policyFileSchema } from './policy-schema.js';
import { PolicySet } from './policy-set.js';
import { POLICY_FILE_MAX_DEPTH, yamlTooDeepAt } from './yaml-depth.js';
import { type LocatedDocument, locateKey, locateValue, positionOf } from './yaml-locations.js';

export type ParsePoliciesResult = { ok: true; set: PolicySet } | { ok: false; errors: PolicyError[] };

const TOP_LEVEL = 'policies, task_types, channels, alerts';

/** Parses and checks a policy file; `file` is the name errors are reported under. Never throws. */
export function parsePolicies(text: string, file: string): ParsePoliciesResult {
  const lines = new LineCounter();
  const tooDeep = yamlTooDeepAt(text, POLICY_FILE_MAX_DEPTH);
  if (tooDeep !== null) {
    const lineStart = text.lastIndexOf('\n', tooDeep - 1) + 1;
    const line = text.slice(0, lineStart).split('\n').length;
    const message = `mappings and lists nest deeper than ${POLICY_FILE_MAX_DEPTH} levels here; a policy file needs a few`;
    return { ok: false, errors: [{ file, line, column: tooDeep - lineStart + 1, path: '', message }] };
  }
  // logLevel 'error': yaml's warnings (a collection as a key) would go to the process's stderr.
  const doc = parseDocument(text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
    logLevel: 'error',
  });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: sorted(
        doc.errors.map((e) => ({
          file,
          ...positionOf(lines, e.pos[0]),
          path: '',
          message: yamlMessage(e.message),
        })),
      ),
    };
  }
  const contents = doc.contents;
  if (contents === null) {
    const message = `the file is empty: write the keys ${TOP_LEVEL} (or "policies: []" for the built-in defaults)`;
    return { ok: false, errors: [{ file, line: 0, column: 0, path: '', message }] };
  }
  const src: LocatedDocument = { doc, lines };
  if (!isMap(contents)) {
    const got = isSeq(contents) ? 'a list' : 'a single value';
    const message = `the file must be a mapping with the keys ${TOP_LEVEL}; got ${got}`;
    return { ok: false, errors: [{ file, ...locateValue(src, []), path: '', message }] };
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    // Alias expansion past the limit ("billion laughs"), or a key yaml cannot turn into JS.
    return {
      ok: false,
      errors: [{ file, ...locateValue(src, []), path: '', message: (err as Error).message }],
    };
  }
  const parsed = collectIssues(policyFileSchema, data);
  const issues: FileIssue[] = parsed.ok ? [] : parsed.issues;
  issues.push(...checkPolicyFile(data, (path) => locateValue(src, path).line));
  if (issues.length > 0 || !parsed.ok) {
    return { ok: false, errors: sorted(issues.map((i) => toPolicyError(src, file, i))) };
  }
  return { ok: true, set: new PolicySet(parsed.value, file) };
}

function toPolicyError(src: LocatedDocument, file: string, issue: FileIssue): PolicyError {
  const position =
    issue.key === undefined ? locateValue(src, issue.path) : locateKey(src, issue.path, issue.key);
  const path = [...issue.path, ...(issue.key === undefined ? [] : [issue.key])].join('.');
  return { file, ...position, path, message: issue.message };
}

/** By position; the order of the file. */
function sorted(errors: PolicyError[]): PolicyError[] {
  return errors.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** yaml's messages without their own " at line L, column C" (the error carries the position). */
function yamlMessage(message: string): string {
  return message.replace(/ at line \d+, column \d+:?[\s\S]*$/, '');
}
