/**
 * Contract: alerts — one firing alert per (agent type, condition) group however many raise into it at
 * once; agents join once and leave, the last one leaving resolves it; severity only rises; escalating
 * and marking a notification are compare-and-set on the version (one winner); delivery attempts are
 * recorded on the alert; reads newest first, filtered (state, unsettled) and paged.
 */
import { describe, expect, it } from 'vitest';
import type { RaiseAlertInput } from '../../store/store.js';
import { type Harness, T0, uniqueId } from './harness.js';

function raise(
  agentType: string,
  agentId: string,
  overrides: Partial<RaiseAlertInput> = {},
): RaiseAlertInput {
  return {
    id: uniqueId('alr'),
    agentType,
    condition: 'progress_stalled',
    agentId,
    severity: 'medium',
    channels: ['ops'],
    summary: `${agentId} stalled`,
    source: 'ladder',
    evidence: { stalledForMs: 20_000 },
    ...overrides,
  };
}

export function alertsContract(h: () => Harness): void {
  describe('alerts', () => {
    it('opens one firing alert per group; agents join it once; severity rises, channels add up', async () => {
      const { store, clock } = h();
      const type = uniqueId('type');
      const first = raise(type, 'agt_1');
      const opened = await store.raiseAlert(first);
      expect(opened).toMatchObject({
        id: first.id,
        group: { agentType: type, condition: 'progress_stalled' },
        severity: 'medium',
        state: 'firing',
        agentIds: ['agt_1'],
        members: ['agt_1'],
        summary: 'agt_1 stalled',
        channels: ['ops'],
        firstAt: T0,
        lastAt: T0,
        notifiedAt: null,
        resolvedAt: null,
        notifications: [],
        notifiedAgentIds: [],
        notifiedSeverity: null,
        escalatedAt: null,
        resolvedNotified: false,
        source: 'ladder',
        evidence: { stalledForMs: 20_000 },
      });
      clock.advance(1000);
      const joined = await store.raiseAlert(
        raise(type, 'agt_2', { severity: 'high', channels: ['slack', 'email', 'ops'], source: 'reassign' }),
      );
      expect(joined).toMatchObject({
        id: first.id,
        severity: 'high',
        agentIds: ['agt_1', 'agt_2'],
        channels: ['email', 'ops', 'slack'],
        summary: 'agt_2 stalled',
        source: 'reassign',
        firstAt: T0,
        lastAt: T0 + 1000,
      });
      expect(joined.version).toBeGreaterThan(opened.version);
      const again = await store.raiseAlert(raise(type, 'agt_1', { severity: 'low' }));
      expect(again).toMatchObject({ id: first.id, severity: 'high', agentIds: ['agt_1', 'agt_2'] });
      // Another condition, or another agent type, is another group.
      const other = await store.raiseAlert(raise(type, 'agt_1', { condition: 'dependency_down' }));
      expect(other.id).not.toBe(first.id);
      const otherType = await store.raiseAlert(raise(uniqueId('type'), 'agt_1'));
      expect(otherType.id).not.toBe(first.id);
      expect(await store.getAlert(first.id)).toEqual(again);
      expect(await store.getAlert('alr_missing')).toBeNull();
    });

    it('of many raising into one group at once, one opens it and the others join it', async () => {
      const { store } = h();
      const type = uniqueId('type');
      const raised = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.raiseAlert(raise(type, `agt_${i}`))),
      );
      const ids = new Set(raised.map((a) => a.id));
      expect(ids.size).toBe(1);
      const alert = await store.getAlert([...ids][0]!);
      expect(alert?.agentIds.slice().sort()).toEqual(Array.from({ length: 12 }, (_, i) => `agt_${i}`).sort());
      const firing = (await store.listAlerts({ states: ['firing'] })).alerts.filter(
        (a) => a.group.agentType === type,
      );
      expect(firing).toHaveLength(1);
    });

    it('clearing takes an agent out; the last one out resolves it, and the group opens anew after', async () => {
      const { store, clock } = h();
      const type = uniqueId('type');
      const a = await store.raiseAlert(raise(type, 'agt_1'));
      await store.raiseAlert(raise(type, 'agt_2'));
      clock.advance(500);
      const [left] = await store.clearAlertMember({ agentId: 'agt_1', condition: 'progress_stalled' });
      expect(left).toMatchObject({ id: a.id, state: 'firing', agentIds: ['agt_2'], lastAt: T0 + 500 });
      expect(await store.clearAlertMember({ agentId: 'agt_1', condition: 'progress_stalled' })).toEqual([]);
      expect(await store.clearAlertMember({ agentId: 'agt_2', condition: 'heartbeat_timeout' })).toEqual([]);
      clock.advance(500);
      const [resolved] = await store.clearAlertMember({ agentId: 'agt_2', condition: 'progress_stalled' });
      expect(resolved).toMatchObject({
        id: a.id,
        state: 'resolved',
        members: [],
        // Once resolved, the alert lists every agent that was in it.
        agentIds: ['agt_1', 'agt_2'],
        resolvedAt: T0 + 1000,
      });
      // Without a condition, the agent leaves every firing alert it is in.
      const stalled = await store.raiseAlert(raise(type, 'agt_9'));
      const lost = await store.raiseAlert(raise(type, 'agt_9', { condition: 'heartbeat_timeout' }));
      await store.raiseAlert(raise(type, 'agt_8', { condition: 'heartbeat_timeout' }));
      const everywhere = await store.clearAlertMember({ agentId: 'agt_9' });
      expect(everywhere.map((a) => [a.id, a.state, a.members]).sort()).toEqual(
        [
          [stalled.id, 'resolved', []],
          [lost.id, 'firing', ['agt_8']],
        ].sort(),
      );
      const reopened = await store.raiseAlert(raise(type, 'agt_3'));
      expect(reopened.id).not.toBe(a.id);
      expect(reopened).toMatchObject({ state: 'firing', agentIds: ['agt_3'], firstAt: T0 + 1000 });
    });

    it('escalation and notification are compare-and-set on the version: one winner', async () => {
      const { store, clock } = h();
      const type = uniqueId('type');
      const a = await store.raiseAlert(raise(type, 'agt_1'));
      clock.advance(30_000);
      const marks = await Promise.all([
        store.markAlertNotified({ id: a.id, version: a.version, kind: 'firing' }),
        store.markAlertNotified({ id: a.id, version: a.version, kind: 'firing' }),
      ]);
      const winners = marks.filter((m) => m !== null);
      expect(winners).toHaveLength(1);
      const notified = winners[0]!;
      expect(notified).toMatchObject({
        notifiedAt: T0 + 30_000,
        notifiedAgentIds: ['agt_1'],
        notifiedSeverity: 'medium',
        resolvedNotified: false,
      });
      // A change in between makes a decision taken on the old version lose.
      const joined = await store.raiseAlert(raise(type, 'agt_2'));
      expect(
        await store.markAlertNotified({ id: a.id, version: notified.version, kind: 'changed' }),
      ).toBeNull();
      expect(await store.escalateAlert({ id: a.id, version: notified.version, severity: 'high' })).toBeNull();
      clock.advance(1000);
      const escalated = await store.escalateAlert({ id: a.id, version: joined.version, severity: 'high' });
      expect(escalated).toMatchObject({ severity: 'high', escalatedAt: T0 + 31_000, lastAt: T0 + 31_000 });
      const [resolved] = await store.clearAlertMember({ agentId: 'agt_1', condition: 'progress_stalled' });
      const [gone] = await store.clearAlertMember({ agentId: 'agt_2', condition: 'progress_stalled' });
      expect(resolved?.state).toBe('firing');
      expect(
        await store.escalateAlert({ id: a.id, version: gone!.version, severity: 'critical' }),
      ).toBeNull();
      const settled = await store.markAlertNotified({ id: a.id, version: gone!.version, kind: 'resolved' });
      expect(settled).toMatchObject({ state: 'resolved', resolvedNotified: true });
    });

    it('records delivery attempts on the alert, oldest first', async () => {
      const { store, clock } = h();
      const a = await store.raiseAlert(raise(uniqueId('type'), 'agt_1'));
      clock.advance(10);
      const failed = await store.recordAlertDelivery({
        alertId: a.id,
        channel: 'ops',
        kind: 'firing',
        attempt: 1,
        ok: false,
        error: 'HTTP 503',
      });
      expect(failed).toEqual({
        channel: 'ops',
        at: T0 + 10,
        ok: false,
        error: 'HTTP 503',
        kind: 'firing',
        attempt: 1,
      });
      clock.advance(10);
      await store.recordAlertDelivery({
        alertId: a.id,
        channel: 'ops',
        kind: 'firing',
        attempt: 2,
        ok: true,
        error: null,
      });
      expect((await store.getAlert(a.id))?.notifications).toEqual([
        failed,
        { channel: 'ops', at: T0 + 20, ok: true, error: null, kind: 'firing', attempt: 2 },
      ]);
    });

    it('lists newest first, by state and unsettled, a page at a time', async () => {
      const { store } = h();
      const type = uniqueId('type');
      const quiet = await store.raiseAlert(raise(type, 'agt_q', { condition: 'heartbeat_timeout' }));
      await store.clearAlertMember({ agentId: 'agt_q', condition: 'heartbeat_timeout' });
      const told = await store.raiseAlert(raise(type, 'agt_t', { condition: 'error_persisting' }));
      const marked = await store.markAlertNotified({ id: told.id, version: told.version, kind: 'firing' });
      await store.clearAlertMember({ agentId: 'agt_t', condition: 'error_persisting' });
      const firing = await store.raiseAlert(raise(type, 'agt_f'));
      expect(marked).not.toBeNull();

      const mine = (alerts: { id: string }[]) =>
        alerts.map((a) => a.id).filter((id) => [quiet.id, told.id, firing.id].includes(id));
      expect(mine((await store.listAlerts()).alerts)).toEqual([firing.id, told.id, quiet.id]);
      expect(mine((await store.listAlerts({ states: ['resolved'] })).alerts)).toEqual([told.id, quiet.id]);
      expect(mine((await store.listAlerts({ states: ['firing'] })).alerts)).toEqual([firing.id]);
      // Unsettled: firing, or resolved after being notified and not yet notified resolved.
      expect(mine((await store.listAlerts({ unsettled: true })).alerts)).toEqual([firing.id, told.id]);

      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const r = await store.listAlerts({ limit: 1, ...(cursor ? { cursor } : {}) });
        seen.push(...r.alerts.map((a) => a.id));
        if (r.nextCursor === null) break;
        cursor = r.nextCursor;
      }
      expect(mine(seen.map((id) => ({ id })))).toEqual([firing.id, told.id, quiet.id]);
    });
  });
}
