/** The PostgreSQL AlertStore (see `alert-store.ts`): each write one statement. */
import type { AlertNotification } from '@rouse/protocol';
import {
  type AlertNotificationRow,
  type AlertRow,
  notificationsByAlert,
  toAlertRecord,
  toNotification,
} from '../alert-row.js';
import type { AlertQuery, AlertRecord, AlertStore, RaiseAlertInput } from '../alert-store.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { ALERT_SQL } from './alert-statements.js';
import type { PgContext } from './postgres-context.js';
import { pgJson } from './row-mapping.js';

/** The rows as records, with their latest notifications. */
async function records(ctx: PgContext, rows: AlertRow[]): Promise<AlertRecord[]> {
  if (rows.length === 0) return [];
  const byAlert = notificationsByAlert(
    await ctx.rows<AlertNotificationRow>('listAlertNotifications', ALERT_SQL.listNotifications, [
      rows.map((r) => r.id),
    ]),
  );
  return rows.map((r) => toAlertRecord(r, byAlert.get(r.id) ?? []));
}

const first = async (ctx: PgContext, rows: AlertRow[]): Promise<AlertRecord | null> =>
  (await records(ctx, rows.slice(0, 1)))[0] ?? null;

export async function raiseAlert(ctx: PgContext, input: RaiseAlertInput): Promise<AlertRecord> {
  const rows = await ctx.rows<AlertRow>('raiseAlert', ALERT_SQL.raiseAlert, [
    ctx.now(),
    input.id,
    input.agentType,
    input.condition,
    input.agentId,
    input.severity,
    pgJson([...new Set(input.channels)].sort()),
    input.summary,
    input.source,
    pgJson(input.evidence),
  ]);
  return (await first(ctx, rows)) as AlertRecord;
}

export async function clearAlertMember(
  ctx: PgContext,
  input: Parameters<AlertStore['clearAlertMember']>[0],
): Promise<AlertRecord[]> {
  return records(
    ctx,
    await ctx.rows<AlertRow>('clearAlertMember', ALERT_SQL.clearAlertMember, [
      ctx.now(),
      input.agentId,
      input.condition ?? null,
    ]),
  );
}

export async function escalateAlert(
  ctx: PgContext,
  input: Parameters<AlertStore['escalateAlert']>[0],
): Promise<AlertRecord | null> {
  return first(
    ctx,
    await ctx.rows<AlertRow>('escalateAlert', ALERT_SQL.escalateAlert, [
      ctx.now(),
      input.id,
      input.version,
      input.severity,
    ]),
  );
}

export async function markAlertNotified(
  ctx: PgContext,
  input: Parameters<AlertStore['markAlertNotified']>[0],
): Promise<AlertRecord | null> {
  return first(
    ctx,
    await ctx.rows<AlertRow>('markAlertNotified', ALERT_SQL.markAlertNotified, [
      ctx.now(),
      input.id,
      input.version,
      input.kind === 'resolved',
    ]),
  );
}

export async function recordAlertDelivery(
  ctx: PgContext,
  input: Parameters<AlertStore['recordAlertDelivery']>[0],
): Promise<AlertNotification> {
  const [row] = await ctx.rows<AlertNotificationRow>('recordAlertDelivery', ALERT_SQL.recordAlertDelivery, [
    ctx.now(),
    input.alertId,
    input.channel,
    input.kind,
    input.attempt,
    input.ok,
    input.error,
  ]);
  return toNotification(row as AlertNotificationRow);
}

export async function getAlert(ctx: PgContext, id: string): Promise<AlertRecord | null> {
  return first(ctx, await ctx.rows<AlertRow>('selectAlert', ALERT_SQL.selectAlert, [id]));
}

export async function listAlerts(
  ctx: PgContext,
  query: AlertQuery = {},
): Promise<{ alerts: AlertRecord[]; nextCursor: string | null }> {
  const limit = query.limit ?? 1_000_000;
  const rows = await ctx.rows<AlertRow>('listAlerts', ALERT_SQL.listAlerts, [
    query.cursor ? decodeCursor(query.cursor) : Number.MAX_SAFE_INTEGER,
    limit + 1,
    query.states ?? null,
    query.unsettled === true,
  ]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    alerts: await records(ctx, page),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(Number(last.seq)) : null,
  };
}
