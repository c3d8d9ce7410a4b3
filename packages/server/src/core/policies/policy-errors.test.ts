import type { PolicyError } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { parsePolicies } from './load-policies.js';

/** Broken policy files: each refused with every error, by file, line, column and field. */

const FILE = 'rouse.yaml';
const yaml = (...lines: string[]) => `${lines.join('\n')}\n`;

function errorsOf(text: string): PolicyError[] {
  const r = parsePolicies(text, FILE);
  if (r.ok) throw new Error(`expected the file to be refused:\n${text}`);
  return r.errors;
}

/** A minimal valid policy's first lines, to put a broken field under (lines 1–3). */
const HEAD = ['policies:', '  - name: reviewers', '    agent_type: llm_chain'];

/** [what is broken, the file, the one error it must give: line, column, path, message]. */
const BROKEN: [string, string, [number, number, string, RegExp]][] = [
  [
    'YAML syntax: an unclosed flow sequence',
    yaml(...HEAD, '    dependencies: [openai, github', '    quiet_period: 5s'),
    [5, 5, '', /Flow sequence in block collection must be sufficiently indented and end with a \]/],
  ],
  ['YAML syntax: a key twice', yaml('policies: []', 'policies: []'), [2, 1, '', /Map keys must be unique/]],
  [
    'a list at the top level',
    yaml('- name: a', '  agent_type: x'),
    [1, 1, '', /must be a mapping with the keys policies, task_types, channels, alerts; got a list/],
  ],
  ['a plain value at the top level', yaml('hello'), [1, 1, '', /got a single value/]],
  [
    'an empty file (refused: see load-policies.ts)',
    '',
    [0, 0, '', /the file is empty.*"policies: \[\]" for the built-in defaults/],
  ],
  ['a file of comments only', yaml('# policies come later'), [0, 0, '', /the file is empty/]],
  [
    'an unknown top-level key, with a hint',
    yaml('policy:', '  - name: a'),
    [1, 1, 'policy', /^unknown key "policy" \(did you mean "policies"\?\)$/],
  ],
  [
    'a typo in a key',
    yaml(...HEAD, '    heartbeat:', '      expected_intervall: 30'),
    [
      5,
      7,
      'policies.0.heartbeat.expected_intervall',
      /^unknown key "expected_intervall" \(did you mean "expected_interval"\?\)$/,
    ],
  ],
  [
    'an unknown key with no near miss lists what is allowed',
    yaml(...HEAD, '    stall_detection: { colour: red }'),
    [
      4,
      24,
      'policies.0.stall_detection.colour',
      /unknown key "colour"; allowed here: enabled, progress_field, stall_threshold/,
    ],
  ],
  [
    'a wrong type',
    yaml(...HEAD, '    heartbeat:', '      timeout_factor: three'),
    [5, 23, 'policies.0.heartbeat.timeout_factor', /^expected a number, got "three"$/],
  ],
  [
    'a negative duration',
    yaml(...HEAD, '    stall_detection:', '      stall_threshold: -5'),
    [5, 24, 'policies.0.stall_detection.stall_threshold', /^must not be negative \(got -5\)$/],
  ],
  [
    'a duration in words',
    yaml(...HEAD, '    quiet_period: 5 minutes'),
    [
      4,
      19,
      'policies.0.quiet_period',
      /expected a duration such as 30 \(seconds\) or "30s".*got "5 minutes" \(did you mean "5m"\?\)/,
    ],
  ],
  [
    'a bad size',
    yaml(...HEAD, '    resources:', '      rss_limit: 4 gigs'),
    [5, 18, 'policies.0.resources.rss_limit', /expected a size such as 1048576 \(bytes\) or "512KiB"/],
  ],
  [
    'an ambiguous size unit',
    yaml(...HEAD, '    resources: { rss_limit: 4G }'),
    [
      4,
      29,
      'policies.0.resources.rss_limit',
      /did you mean "4GiB" \(powers of 1024\) or "4GB" \(of 1000\)\?/,
    ],
  ],
  [
    'rss_growth per second',
    yaml(...HEAD, '    resources: { rss_growth: 1MiB/s }'),
    [4, 30, 'policies.0.resources.rss_growth', /is a size per minute: write "1MiB" or "1MiB\/min"/],
  ],
  [
    'a duplicate policy name',
    yaml(...HEAD, '  - name: reviewers', '    agent_type: shell'),
    [4, 11, 'policies.1.name', /^duplicate policy name "reviewers" \(first at line 2\)$/],
  ],
  [
    'two "*" policies',
    yaml('policies:', '  - { name: a, agent_type: "*" }', '  - { name: b, agent_type: "*" }'),
    [3, 28, 'policies.1.agent_type', /a second "\*" policy.*the first: "a", line 2/],
  ],
  [
    'two policies for one agent type',
    yaml(...HEAD, '  - name: other', '    agent_type: llm_chain'),
    [
      5,
      17,
      'policies.1.agent_type',
      /agent type "llm_chain" already has policy "reviewers" \(line 3\): one policy per agent type/,
    ],
  ],
  [
    'the built-in name on a typed policy',
    yaml('policies:', '  - name: default', '    agent_type: llm_chain'),
    [2, 11, 'policies.0.name', /"default" names the built-in policy for every other agent type/],
  ],
  [
    'a policy without agent_type',
    yaml('policies:', '  - name: reviewers', '    quiet_period: 5s'),
    [2, 5, 'policies.0.agent_type', /^is required$/],
  ],
  [
    'a bad agent type',
    yaml('policies:', '  - name: reviewers', '    agent_type: "llm chain"'),
    [
      3,
      17,
      'policies.0.agent_type',
      /must be an agent type \(letters, digits and _ \. : \/ - only\), or "\*"/,
    ],
  ],
  [
    'an unknown action',
    yaml(
      ...HEAD,
      '    recovery_actions:',
      '      - action: restart',
      '        on_condition: heartbeat_timeout',
    ),
    [
      5,
      17,
      'policies.0.recovery_actions.0.action',
      /^unknown action "restart": expected one of wake, send_signal, snapshot_and_restart, reassign, alert, terminate \(did you mean "snapshot_and_restart"\?\)$/,
    ],
  ],
  [
    'a rung without an action',
    yaml(...HEAD, '    recovery_actions:', '      - on_condition: any'),
    [5, 9, 'policies.0.recovery_actions.0.action', /^is required: one of wake, send_signal/],
  ],
  [
    'an unknown on_condition',
    yaml(...HEAD, '    recovery_actions:', '      - action: wake', '        on_condition: stalled'),
    [
      6,
      23,
      'policies.0.recovery_actions.0.on_condition',
      /expected one of heartbeat_timeout, .*; got "stalled" \(did you mean "stall_detected"\?\)/,
    ],
  ],
  [
    'a rung without on_condition',
    yaml(...HEAD, '    recovery_actions:', '      - action: wake'),
    [
      5,
      9,
      'policies.0.recovery_actions.0.on_condition',
      /^is required: one of heartbeat_timeout, progress_stalled, .*, stall_detected, recovery_failed, any$/,
    ],
  ],
  [
    'max_attempts 0',
    yaml(...HEAD, '    recovery_actions:', '      - { action: wake, on_condition: any, max_attempts: 0 }'),
    [5, 58, 'policies.0.recovery_actions.0.max_attempts', /^must be at least 1 \(got 0\)$/],
  ],
  [
    'an alert rung naming an undefined channel',
    yaml(
      ...HEAD,
      '    recovery_actions:',
      '      - { action: alert, on_condition: recovery_failed, channels: [slack, pager] }',
      'channels:',
      '  slack: { type: slack, webhook_url: "https://hooks.slack.com/services/x" }',
    ),
    [
      5,
      75,
      'policies.0.recovery_actions.0.channels.1',
      /names channel "pager", which is not defined under channels: \(defined: slack\)/,
    ],
  ],
  [
    'an alert rung when the file defines no channel',
    yaml(...HEAD, '    recovery_actions: [{ action: alert, on_condition: any, channels: [ops] }]'),
    [
      4,
      71,
      'policies.0.recovery_actions.0.channels.0',
      /not defined under channels: \(the file defines none\)/,
    ],
  ],
  [
    'a bad signal name',
    yaml(
      ...HEAD,
      '    recovery_actions:',
      '      - { action: send_signal, on_condition: any, signal: USR1 }',
    ),
    [
      5,
      59,
      'policies.0.recovery_actions.0.signal',
      /expected one of SIGHUP, .*; got "USR1" \(did you mean "SIGUSR1"\?\)/,
    ],
  ],
  [
    'a field of another action',
    yaml(...HEAD, '    recovery_actions:', '      - { action: wake, on_condition: any, grace: 5s }'),
    [
      5,
      44,
      'policies.0.recovery_actions.0.grace',
      /^unknown key "grace": it belongs to terminate rungs, not wake$/,
    ],
  ],
  [
    'an unknown severity',
    yaml(...HEAD, '    recovery_actions:', '      - { action: alert, on_condition: any, severity: urgent }'),
    [
      5,
      55,
      'policies.0.recovery_actions.0.severity',
      /^expected one of low, medium, high, critical; got "urgent"$/,
    ],
  ],
  [
    'recovery_actions not a list',
    yaml(...HEAD, '    recovery_actions: wake'),
    [4, 23, 'policies.0.recovery_actions', /^expected a list, got "wake"$/],
  ],
  [
    'timeout_factor below 1',
    yaml(...HEAD, '    heartbeat: { timeout_factor: 0.5 }'),
    [4, 34, 'policies.0.heartbeat.timeout_factor', /^must be at least 1 \(got 0\.5\)$/],
  ],
  [
    'an interval below 100 ms',
    yaml(...HEAD, '    heartbeat: { expected_interval: 50ms }'),
    [4, 37, 'policies.0.heartbeat.expected_interval', /^must be at least 100ms \(got 50ms\)$/],
  ],
  [
    'min_timeout above the timeout',
    yaml(...HEAD, '    heartbeat: { expected_interval: 5s, min_timeout: 20s }'),
    [
      4,
      54,
      'policies.0.heartbeat.min_timeout',
      /must not exceed the heartbeat timeout, timeout_factor × expected_interval = 15s \(got 20s\)/,
    ],
  ],
  [
    'min_fit above 1',
    yaml(...HEAD, '    resources: { min_fit: 1.5 }'),
    [4, 27, 'policies.0.resources.min_fit', /^must be at most 1 \(got 1\.5\)$/],
  ],
  [
    'progress_field not a string',
    yaml(...HEAD, '    stall_detection: { progress_field: 5 }'),
    [4, 40, 'policies.0.stall_detection.progress_field', /^expected a string, got 5$/],
  ],
  [
    'an empty block where a mapping goes',
    yaml(...HEAD, '    heartbeat:'),
    [4, 5, 'policies.0.heartbeat', /^expected a mapping, got null \(an empty value\)$/],
  ],
  [
    'a bad dependency name',
    yaml(...HEAD, '    dependencies: [open ai]'),
    [4, 20, 'policies.0.dependencies.0', /must be letters, digits and _ \. : \/ - only/],
  ],
  [
    'task_types: expected_duration with min > max',
    yaml('task_types:', '  review:', '    expected_duration: { min: 10m, max: 5m }'),
    [3, 31, 'task_types.review.expected_duration.min', /^must not exceed max \(10m > 5m\)$/],
  ],
  [
    'task_types: timeout_factor 1',
    yaml('task_types:', '  review:', '    timeout_factor: 1'),
    [3, 21, 'task_types.review.timeout_factor', /must be > 1: the heartbeat timeout/],
  ],
  [
    'task_types: a bad type name',
    yaml('task_types:', '  "re view": { max_attempts: 2 }'),
    [2, 3, 'task_types.re view', /"re view": must be letters, digits/],
  ],
  [
    'task_types: backoff cap below base',
    yaml('task_types:', '  review:', '    backoff: { base: 10s, cap: 1s }'),
    [3, 32, 'task_types.review.backoff.cap', /^must be at least base \(1s < 10s\)$/],
  ],
  [
    'channels: an unknown type',
    yaml('channels:', '  pager: { type: pagerduty, key: x }'),
    [2, 18, 'channels.pager.type', /^unknown type "pagerduty": expected one of webhook, slack, email$/],
  ],
  [
    'channels: a URL that is not http(s)',
    yaml('channels:', '  ops: { type: webhook, url: "ftp://ops.example/hook" }'),
    [2, 30, 'channels.ops.url', /^must be an http:\/\/ or https:\/\/ URL$/],
  ],
  [
    'channels: an email channel without recipients',
    yaml(
      'channels:',
      '  mail:',
      '    type: email',
      '    smtp: { host: smtp.example, port: 587 }',
      '    from: rouse@example',
    ),
    [3, 5, 'channels.mail.to', /^is required$/],
  ],
  [
    'alerts: a bad duration',
    yaml('alerts: { group_wait: soon }'),
    [1, 23, 'alerts.group_wait', /expected a duration such as 30 \(seconds\)/],
  ],
];

describe('parsePolicies: broken files are refused with the file, line, column and field', () => {
  it(`has at least 20 distinct broken files (${BROKEN.length})`, () => {
    expect(BROKEN.length).toBeGreaterThanOrEqual(20);
    expect(new Set(BROKEN.map(([, text]) => text)).size).toBe(BROKEN.length);
  });

  for (const [what, text, [line, column, path, message]] of BROKEN) {
    it(what, () => {
      const errors = errorsOf(text);
      expect(errors, JSON.stringify(errors)).toHaveLength(1);
      expect(errors[0], JSON.stringify(errors[0])).toMatchObject({ file: FILE, line, column, path });
      expect(errors[0]!.message, JSON.stringify(errors[0])).toMatch(message);
    });
  }

  it('reports every error of a file with several, in file order', () => {
    const errors = errorsOf(
      yaml(
        'policies:',
        '  - name: a',
        '    agent_type: x',
        '    heartbeat:',
        '      expected_interval: 5 minutes',
        '      timeout_factor: 0.5',
        '    resources:',
        '      rss_limit: 4G',
        '    recovery_actions:',
        '      - action: restart',
        '        on_condition: heartbeat_timeout',
        '      - action: wake',
        '        on_condition: stalled',
        '        signal: SIGUSR1',
        '        max_attempts: 0',
        '  - name: a',
        '    agent_type: "*"',
        '  - name: b',
        '    agent_type: "*"',
        '    colour: red',
        'task_types:',
        '  t: { expected_duration: { min: 10s, max: 5s } }',
        'alert: {}',
      ),
    );
    expect(errors.map((e) => [e.line, e.column, e.path])).toEqual([
      [5, 26, 'policies.0.heartbeat.expected_interval'],
      [6, 23, 'policies.0.heartbeat.timeout_factor'],
      [8, 18, 'policies.0.resources.rss_limit'],
      [10, 17, 'policies.0.recovery_actions.0.action'],
      [13, 23, 'policies.0.recovery_actions.1.on_condition'],
      [14, 9, 'policies.0.recovery_actions.1.signal'],
      [15, 23, 'policies.0.recovery_actions.1.max_attempts'],
      [16, 11, 'policies.1.name'],
      [19, 17, 'policies.2.agent_type'],
      [20, 5, 'policies.2.colour'],
      [22, 34, 'task_types.t.expected_duration.min'],
      [23, 1, 'alert'],
    ]);
    expect(errors.every((e) => e.file === FILE && e.message.length > 0)).toBe(true);
    expect(errors[11]!.message).toBe('unknown key "alert" (did you mean "alerts"?)');
  });

  it('reports every YAML syntax error', () => {
    const errors = errorsOf(yaml('policies:', '  - name: [a', 'b: : :'));
    expect(errors.length).toBeGreaterThan(1);
    expect(errors.every((e) => e.line >= 2 && e.path === '')).toBe(true);
  });

  it('refuses collections nested deeper than 64 levels before composing them, at the first too deep', () => {
    const deep = (open: string, close: string, n: number) => `${open.repeat(n)}${close.repeat(n)}`;
    const cases: [string, number, number][] = [
      // The top-level mapping is level 1: the 64th bracket opens level 65.
      [`policies: ${deep('[', ']', 20_000)}\n`, 1, 11 + 63],
      [`policies: ${deep('{a: ', '}', 20_000)}\n`, 1, 11 + 4 * 63],
      [`policies:\n${'- '.repeat(20_000)}x\n`, 2, 1 + 2 * 63],
      [
        `a: 1\nb:\n${Array.from({ length: 70 }, (_, i) => `${' '.repeat(i + 1)}k:`).join('\n')} 1\n`,
        3 + 63,
        1 + 64,
      ],
    ];
    for (const [text, line, column] of cases) {
      expect(errorsOf(text)).toEqual([
        {
          file: FILE,
          line,
          column,
          path: '',
          message: 'mappings and lists nest deeper than 64 levels here; a policy file needs a few',
        },
      ]);
    }
    // 64 levels are read as YAML (and refused by the schema, as policies are not lists of lists).
    const errors = errorsOf(`policies: ${deep('[', ']', 63)}\n`);
    expect(errors.some((e) => /deeper than 64/.test(e.message))).toBe(false);
  });

  it('never throws, whatever the text', () => {
    for (const text of ['\u0000', '*x', '!!binary xx', 'a: &a [*a]', '? [a]\n: 1', `${'['.repeat(1000)}`]) {
      expect(() => parsePolicies(text, FILE)).not.toThrow();
    }
  });
});
