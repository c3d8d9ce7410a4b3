/**
 * What a notification says (docs/design.md "Alerts"): a one-line title and a short plain-text body,
 * the same for every channel (Slack and email carry them; the webhook carries them beside the alert).
 */
import type { Alert, AlertNotificationKind } from '@rouse/protocol';

/** Agents named in a body; the rest are counted. */
export const AGENTS_LISTED = 20;

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

export function alertTitle(
  alert: Pick<Alert, 'group' | 'severity' | 'agentIds'>,
  kind: AlertNotificationKind,
): string {
  const { agentType, condition } = alert.group;
  const agents = plural(alert.agentIds.length, 'agent');
  switch (kind) {
    case 'resolved':
      return `[RESOLVED] ${condition} on ${agentType} (${agents})`;
    case 'escalated':
      return `[${alert.severity.toUpperCase()}, escalated] ${condition} on ${agentType}: ${agents}`;
    default:
      return `[${alert.severity.toUpperCase()}] ${condition} on ${agentType}: ${agents}`;
  }
}

export function alertBody(alert: Alert, kind: AlertNotificationKind): string {
  const listed = alert.agentIds.slice(0, AGENTS_LISTED).join(', ');
  const more = alert.agentIds.length - AGENTS_LISTED;
  const lines = [
    alert.summary,
    `Agents: ${listed}${more > 0 ? ` and ${more} more` : ''}`,
    `Firing since ${new Date(alert.firstAt).toISOString()}` +
      (kind === 'resolved' && alert.resolvedAt !== null
        ? `, resolved at ${new Date(alert.resolvedAt).toISOString()}`
        : ''),
    `Alert ${alert.id} (${kind}); rouse alerts --json for the details`,
  ];
  return lines.join('\n');
}
