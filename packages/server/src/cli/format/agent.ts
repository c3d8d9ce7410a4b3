/** The human rendering of agents: the list's status and conditions cells, and one agent in full. */
import type { Agent, AgentCondition, AgentStatus } from '@rouse/protocol';
import { formatEvidence, humanizeKey } from './diagnosis.js';
import type { Style } from './style.js';
import { renderPairs } from './table.js';
import { formatRelative } from './time.js';

/** A status, coloured by how much attention it needs. */
export function styleStatus(status: AgentStatus, style: Style): string {
  switch (status) {
    case 'lost':
    case 'stalled':
    case 'error':
    case 'terminated':
      return style.red(status);
    case 'at_risk':
    case 'terminating':
      return style.yellow(status);
    case 'running':
      return style.cyan(status);
    default:
      return status;
  }
}

/** `progress_stalled (tsk_…), dependency_down`, or `-`. */
export function conditionList(conditions: readonly AgentCondition[]): string {
  if (conditions.length === 0) return '-';
  return conditions.map((c) => (c.taskId === null ? c.condition : `${c.condition} (${c.taskId})`)).join(', ');
}

/** One condition: its kind, how long it has been open, and its evidence. */
export function renderCondition(c: AgentCondition, now: number, style: Style, indent = '  '): string[] {
  const what = c.taskId === null ? c.condition : `${c.condition} on ${c.taskId}`;
  const out = [
    `${indent}${style.yellow('●')} ${style.bold(what)} ${style.dim(`(since ${formatRelative(c.since, now)})`)}`,
  ];
  const entries = Object.entries(c.evidence);
  const width = Math.max(0, ...entries.map(([k]) => humanizeKey(k).length));
  for (const [k, v] of entries) {
    out.push(`${indent}    ${style.dim(humanizeKey(k).padEnd(width))}  ${formatEvidence(k, v, now)}`);
  }
  return out;
}

/** The agent's facts, as `key: value` lines. */
export function renderAgentFacts(a: Agent, now: number, style: Style): string[] {
  const m = a.metrics;
  const metrics = m
    ? [
        m.rssBytes === undefined ? null : `rss ${Math.round(m.rssBytes / 1048576)} MiB`,
        m.cpuPercent === undefined ? null : `cpu ${m.cpuPercent}%`,
        m.iterationMs === undefined ? null : `iteration ${m.iterationMs} ms`,
        m.loopLagMs === undefined ? null : `loop lag ${m.loopLagMs} ms`,
      ]
        .filter((x) => x !== null)
        .join(', ')
    : '-';
  return renderPairs([
    [
      'status',
      `${styleStatus(a.status, style)} ${style.dim(`(reports ${a.reportedStatus}${a.statusMessage ? `: ${a.statusMessage}` : ''})`)}`,
    ],
    ['agent type', `${a.agentType} ${style.dim(`(policy ${a.policy})`)}`],
    ['name', a.name],
    ['key', a.key === null ? '-' : `${a.key} ${style.dim(`(incarnation ${a.incarnation})`)}`],
    ['host / pid', `${a.host ?? '-'} / ${a.pid ?? '-'}`],
    ['task types', a.taskTypes.join(', ') || '-'],
    ['requires', a.requires.join(', ') || '-'],
    [
      'started',
      `${formatRelative(a.startedAt, now)}${a.registeredAt !== a.startedAt ? style.dim(` (slot registered ${formatRelative(a.registeredAt, now)})`) : ''}`,
    ],
    [
      'heartbeat',
      `${formatRelative(a.lastHeartbeatAt, now)} ${style.dim(`(every ${a.heartbeatIntervalMs / 1000}s; lease ${a.leaseExpiresAt === null ? 'none' : `ends ${formatRelative(a.leaseExpiresAt, now)}`})`)}`,
    ],
    [
      'progress',
      a.progress === null && a.phase === null
        ? '-'
        : `${JSON.stringify(a.progress)}${a.phase ? ` "${a.phase}"` : ''} ${style.dim(`(moved ${formatRelative(a.progressChangedAt, now)})`)}`,
    ],
    ['metrics', metrics],
    ['holds', a.currentTaskIds.join(', ') || '-'],
    ['polled', formatRelative(a.lastPollAt, now)],
  ]);
}
