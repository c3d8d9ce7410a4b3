/** The SQLite AlertStore (see `alert-store.ts`). */
import type { AlertNotification, JsonObject } from '@rouse/protocol';
import {
  type AlertNotificationRow,
  type AlertRow,
  notificationsByAlert,
  toAlertRecord,
  toNotification,
} from '../alert-row.js';
import type { AlertQuery, AlertRecord, AlertStore, RaiseAlertInput } from '../alert-store.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type { SqliteContext } from './sqlite-context.js';

type RawRow = Omit<
  AlertRow,
  'agent_ids' | 'all_agent_ids' | 'channels' | 'evidence' | 'notified_agent_ids'
> & {
  agent_ids: string;
  all_agent_ids: string;
  channels: string;
  evidence: string;
  notified_agent_ids: string;
};

const parse = (raw: RawRow): AlertRow => ({
  ...raw,
  agent_ids: JSON.parse(raw.agent_ids) as string[],
  all_agent_ids: JSON.parse(raw.all_agent_ids) as string[],
  channels: JSON.parse(raw.channels) as string[],
  evidence: JSON.parse(raw.evidence) as JsonObject,
  notified_agent_ids: JSON.parse(raw.notified_agent_ids) as string[],
});

/** The rows as records, with their latest notifications. */
function records(ctx: SqliteContext, raws: RawRow[]): AlertRecord[] {
  if (raws.length === 0) return [];
  const byAlert = notificationsByAlert(
    ctx.alerts.listNotifications.all({
      ids: JSON.stringify(raws.map((r) => r.id)),
    }) as AlertNotificationRow[],
  );
  return raws.map((r) => toAlertRecord(parse(r), byAlert.get(r.id) ?? []));
}

const one = (ctx: SqliteContext, raw: unknown): AlertRecord | null =>
  raw === undefined ? null : (records(ctx, [raw as RawRow])[0] ?? null);

export function raiseAlert(ctx: SqliteContext, input: RaiseAlertInput): AlertRecord {
  const raw = ctx.alerts.raiseAlert.get({
    id: input.id,
    agentType: input.agentType,
    condition: input.condition,
    agentId: input.agentId,
    agentIds: JSON.stringify([input.agentId]),
    severity: input.severity,
    channels: JSON.stringify([...new Set(input.channels)].sort()),
    summary: input.summary,
    source: input.source,
    evidence: JSON.stringify(input.evidence),
    now: ctx.clock.now(),
  });
  return one(ctx, raw) as AlertRecord;
}

export function clearAlertMember(
  ctx: SqliteContext,
  input: Parameters<AlertStore['clearAlertMember']>[0],
): AlertRecord[] {
  return records(
    ctx,
    ctx.alerts.clearAlertMember.all({
      agentId: input.agentId,
      condition: input.condition ?? null,
      now: ctx.clock.now(),
    }) as RawRow[],
  );
}

export function escalateAlert(
  ctx: SqliteContext,
  input: Parameters<AlertStore['escalateAlert']>[0],
): AlertRecord | null {
  return one(ctx, ctx.alerts.escalateAlert.get({ ...input, now: ctx.clock.now() }));
}

export function markAlertNotified(
  ctx: SqliteContext,
  input: Parameters<AlertStore['markAlertNotified']>[0],
): AlertRecord | null {
  return one(
    ctx,
    ctx.alerts.markAlertNotified.get({
      id: input.id,
      version: input.version,
      resolved: input.kind === 'resolved' ? 1 : 0,
      now: ctx.clock.now(),
    }),
  );
}

export function recordAlertDelivery(
  ctx: SqliteContext,
  input: Parameters<AlertStore['recordAlertDelivery']>[0],
): AlertNotification {
  return toNotification(
    ctx.alerts.recordAlertDelivery.get({
      ...input,
      ok: input.ok ? 1 : 0,
      now: ctx.clock.now(),
    }) as AlertNotificationRow,
  );
}

export function getAlert(ctx: SqliteContext, id: string): AlertRecord | null {
  return one(ctx, ctx.alerts.selectAlert.get({ id }));
}

export function listAlerts(
  ctx: SqliteContext,
  query: AlertQuery = {},
): { alerts: AlertRecord[]; nextCursor: string | null } {
  const limit = query.limit ?? Number.MAX_SAFE_INTEGER;
  const raws = ctx.alerts.listAlerts.all({
    beforeSeq: query.cursor ? decodeCursor(query.cursor) : Number.MAX_SAFE_INTEGER,
    states: query.states === undefined ? null : JSON.stringify(query.states),
    unsettled: query.unsettled === true ? 1 : 0,
    limit: limit + 1,
  }) as RawRow[];
  const page = raws.slice(0, limit);
  const last = page.at(-1);
  return {
    alerts: records(ctx, page),
    nextCursor: raws.length > limit && last !== undefined ? encodeCursor(last.seq) : null,
  };
}
