/**
 * Alerts (docs/design.md "Alerts"): the watchdog telling people. Whoever finds something a person must
 * know — an `alert` rung, a `reassign`, the ladder running out (`recovery_failed`), a supervisor's
 * `fatal` — calls `raise`; when the agent is no longer in the condition, `clear`. Both are one store
 * write and return at once: nothing is sent from them.
 *
 * Alerts are grouped by (agent type, condition) in the store (one firing alert per group). A loop on
 * the injected clock applies the grouping rules (`core/alerts/alert-rules.ts`) to every unsettled
 * alert: it waits `group_wait`, notifies new agents at most every `group_interval`, repeats every
 * `repeat_interval`, escalates after `escalate_after`, holds back groups a firing `dependency_down`
 * group covers, and notifies a group's resolution. It wakes when the next step is due, after every
 * raise and clear, and at least every `pollMs` (other coordinators' changes, inhibition ending).
 *
 * Notifying is a conditional write (the alert's version): with several coordinators on one store,
 * exactly one wins and delivers. Deliveries run in the background, one per channel, each attempt
 * recorded on the alert (`ok`, `error`), failures retried with exponential backoff up to
 * `maxAttempts`: a receiver that is down never delays detection, the ladder, or the other alerts.
 */
import type {
  Alert,
  AlertCondition,
  AlertNotificationKind,
  AlertSeverity,
  AlertsResponse,
  JsonObject,
} from '@rouse/protocol';
import type { Logger } from 'pino';
import { type AlertGroupState, isInhibited, nextAlertStep } from '../../core/alerts/alert-rules.js';
import { backoffDelayMs, type ResolvedBackoffOptions } from '../../core/backoff.js';
import type { Clock, TimerHandle } from '../../core/clock.js';
import { toAlert } from '../../store/alert-row.js';
import type { AlertQuery, AlertRecord, Store } from '../../store/store.js';
import type { EventBus } from '../event-bus.js';
import type { EventRelay } from '../event-relay.js';
import { newId } from '../ids.js';
import type { PolicyProvider } from '../policy-registry.js';
import { type AlertMessage, sendThrough } from './channels.js';

/** Who raised an alert: an `alert` rung, a `reassign`, the ladder running out, a supervisor, a person. */
export type AlertSource = 'alert_rung' | 'reassign' | 'recovery_failed' | 'supervisor' | 'manual';

export interface RaiseAlert {
  agentId: string;
  agentType: string;
  condition: AlertCondition;
  severity: AlertSeverity;
  /**
   * Channel names from the policy file (an `alert` rung's `channels`). An alert raised with none (a
   * reassign, a supervisor's fatal) is notified through every channel of the file.
   */
  channels?: readonly string[];
  /** One line a person reads first. */
  summary: string;
  /** What was seen (the condition's evidence, the intervention, the exit). */
  evidence?: JsonObject;
  source: AlertSource;
}

/** The outcomes a delivery attempt is counted under (`rouse_alert_notifications_total`). */
export type DeliveryOutcome = 'delivered' | 'failed' | 'gave_up';

export interface AlertDeliveryOptions {
  /** Longest one delivery attempt may take. @default 10000 */
  timeoutMs?: number;
  /** Attempts per notification and channel, the first included. @default 5 */
  maxAttempts?: number;
  /** Between attempts: 1 s, 2 s, 4 s … capped at 1 min by default. */
  backoff?: ResolvedBackoffOptions;
  /** How often the loop looks even when nothing is due. @default 5000 */
  pollMs?: number;
  /** Where the channels' secrets are read. @default process.env */
  env?: NodeJS.ProcessEnv;
}

export const ALERT_DELIVERY_DEFAULTS = {
  timeoutMs: 10_000,
  maxAttempts: 5,
  backoff: { baseMs: 1000, capMs: 60_000, jitter: 0 } as ResolvedBackoffOptions,
  pollMs: 5000,
};

export interface Alerts {
  /**
   * Put the agent into its group's firing alert (opening it). Returns once that is written — never
   * waits for a notification — with the alert, or null when the store could not be written (logged;
   * never throws, so the caller's own work goes on).
   */
  raise(input: RaiseAlert): Promise<Alert | null>;
  /**
   * The agent is no longer in `condition`: it leaves the firing alerts of that condition (without a
   * condition, every firing alert it is in — it left, or was ended); an alert left empty resolves
   * (notified resolved if it was notified firing). Never throws.
   */
  clear(input: { agentId: string; condition?: AlertCondition }): Promise<Alert[]>;
  list(query: AlertQuery): Promise<AlertsResponse>;
  get(id: string): Promise<Alert | null>;
  /** Apply the grouping rules now (the loop does this by itself). */
  evaluate(): Promise<void>;
  start(): void;
  stop(): void;
  /** Resolves when no evaluation or delivery attempt is in flight (retries waiting on the clock do not count). */
  idle(): Promise<void>;
  /** Delivery attempts so far by channel and outcome. */
  deliveryCounts(): { channel: string; outcome: DeliveryOutcome; count: number }[];
}

const groupState = (a: AlertRecord): AlertGroupState => ({
  condition: a.group.condition,
  state: a.state,
  severity: a.severity,
  agentIds: a.members,
  firstAt: a.firstAt,
  notifiedAt: a.notifiedAt,
  notifiedAgentIds: a.notifiedAgentIds,
  notifiedSeverity: a.notifiedSeverity,
  escalatedAt: a.escalatedAt,
  resolvedNotified: a.resolvedNotified,
});

export function createAlerts(deps: {
  store: Store;
  clock: Clock;
  bus: EventBus;
  /** Relays this coordinator's alert changes to the others' live streams. */
  eventRelay?: Pick<EventRelay, 'relayAlert'>;
  logger: Logger;
  policies: PolicyProvider;
  options?: AlertDeliveryOptions;
}): Alerts {
  const { store, clock, bus, logger, policies } = deps;
  const o = { ...ALERT_DELIVERY_DEFAULTS, env: process.env, ...stripUndefined(deps.options ?? {}) };
  let running = false;
  /** Aborted by `stop()`: HTTP deliveries under way give up at once. */
  let stopping = new AbortController();
  let timer: { at: number; handle: TimerHandle } | null = null;
  let evaluating: Promise<void> | null = null;
  let again = false;
  const inFlight = new Set<Promise<void>>();
  const retries = new Set<TimerHandle>();
  const counts = new Map<string, { channel: string; outcome: DeliveryOutcome; count: number }>();

  const publish = (alert: AlertRecord): void => {
    deps.eventRelay?.relayAlert(alert.id);
    if (bus.active) bus.publish({ type: 'alert', at: clock.now(), alert: toAlert(alert) });
  };
  const track = (p: Promise<void>): void => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  /** Wake the loop at `at` (or sooner if it is already due sooner). */
  const wakeAt = (at: number): void => {
    if (!running) return;
    if (timer !== null && timer.at <= at) return;
    timer?.handle.cancel();
    const handle = clock.setTimer(at - clock.now(), () => {
      timer = null;
      soon();
    });
    timer = { at, handle };
  };

  /** Evaluate once more as soon as the running evaluation (if any) ends; never two at once. */
  const soon = (): void => {
    if (!running) return;
    if (evaluating !== null) {
      again = true;
      return;
    }
    const run = evaluateOnce()
      .catch((err: unknown) => logger.warn({ err }, 'alert evaluation failed; retried at the next poll'))
      .finally(() => {
        evaluating = null;
        if (again) {
          again = false;
          soon();
        }
      });
    evaluating = run;
    track(run);
  };

  const count = (channel: string, outcome: DeliveryOutcome): void => {
    const key = `${channel}\u0000${outcome}`;
    const c = counts.get(key) ?? { channel, outcome, count: 0 };
    c.count += 1;
    counts.set(key, c);
  };

  /** One attempt to send `m` through `channelName`; the next is scheduled on failure. */
  const attempt = async (channelName: string, m: AlertMessage, n: number): Promise<void> => {
    const channel = policies.current().channels.get(channelName);
    let error: string | null = null;
    if (channel === undefined) {
      error = `no channel named ${channelName} in the policy file`;
    } else {
      try {
        await sendThrough(channel, m, {
          timeoutMs: o.timeoutMs,
          env: o.env,
          now: clock.now(),
          signal: stopping.signal,
        });
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
    }
    const last = error !== null && (channel === undefined || n >= o.maxAttempts);
    count(channelName, error === null ? 'delivered' : last ? 'gave_up' : 'failed');
    try {
      await store.recordAlertDelivery({
        alertId: m.alert.id,
        channel: channelName,
        kind: m.kind,
        attempt: n,
        ok: error === null,
        error,
      });
      if (bus.active) {
        const now = await store.getAlert(m.alert.id);
        if (now !== null) publish(now);
      }
    } catch (err) {
      logger.warn({ err, alertId: m.alert.id, channel: channelName }, 'could not record an alert delivery');
    }
    if (error === null) return;
    if (last || !running) {
      logger.warn(
        { alertId: m.alert.id, channel: channelName, attempts: n, error },
        last ? 'alert notification not delivered; giving up' : 'alert notification not delivered; stopping',
      );
      return;
    }
    logger.info(
      { alertId: m.alert.id, channel: channelName, attempt: n, error },
      'alert delivery failed; retrying',
    );
    const handle = clock.setTimer(backoffDelayMs(n, o.backoff), () => {
      retries.delete(handle);
      if (running) track(attempt(channelName, m, n + 1));
    });
    retries.add(handle);
  };

  const deliver = (alert: AlertRecord, kind: AlertNotificationKind): void => {
    const names = alert.channels.length > 0 ? alert.channels : [...policies.current().channels.keys()];
    if (names.length === 0) {
      logger.warn(
        { alertId: alert.id, kind },
        'an alert is due but no channel is defined in the policy file',
      );
      return;
    }
    const m: AlertMessage = { alert: toAlert(alert), kind, at: clock.now() };
    for (const name of names) track(attempt(name, m, 1));
  };

  /** One pass of the grouping rules over every unsettled alert. */
  const evaluateOnce = async (): Promise<void> => {
    const timing = policies.current().alerts;
    const { alerts } = await store.listAlerts({ unsettled: true });
    const down = new Set(
      alerts
        .filter((a) => a.state === 'firing' && a.group.condition === 'dependency_down')
        .flatMap((a) => a.members),
    );
    let next = clock.now() + o.pollMs;
    for (const found of alerts) {
      let a = found;
      // At most: escalate, then notify the escalation.
      for (let step = 0; step < 3; step++) {
        const s = nextAlertStep(groupState(a), timing, clock.now(), isInhibited(groupState(a), down));
        if (s.do === 'escalate') {
          const escalated = await store.escalateAlert({ id: a.id, version: a.version, severity: s.severity });
          if (escalated === null) break; // changed meanwhile: the next pass sees it
          logger.info({ alertId: a.id, severity: s.severity }, 'alert escalated');
          publish(escalated);
          a = escalated;
          continue;
        }
        if (s.do === 'notify') {
          const marked = await store.markAlertNotified({ id: a.id, version: a.version, kind: s.kind });
          if (marked !== null) {
            logger.info({ alertId: a.id, kind: s.kind, agents: marked.agentIds.length }, 'alert notified');
            publish(marked);
            deliver(marked, s.kind);
          }
          break;
        }
        if (s.do === 'wait' && s.at !== null) next = Math.min(next, s.at);
        break;
      }
    }
    wakeAt(next);
  };

  return {
    async raise(input) {
      try {
        const alert = await store.raiseAlert({
          id: newId('alr', clock.now()),
          agentType: input.agentType,
          condition: input.condition,
          agentId: input.agentId,
          severity: input.severity,
          channels: [...(input.channels ?? [])],
          summary: input.summary,
          source: input.source,
          evidence: input.evidence ?? {},
        });
        publish(alert);
        soon();
        return toAlert(alert);
      } catch (err) {
        logger.warn({ err, agentId: input.agentId, condition: input.condition }, 'could not raise an alert');
        return null;
      }
    },

    async clear(input) {
      try {
        const changed = await store.clearAlertMember(input);
        for (const a of changed) publish(a);
        if (changed.length > 0) soon();
        return changed.map(toAlert);
      } catch (err) {
        logger.warn({ err, ...input }, 'could not clear an alert');
        return [];
      }
    },

    async list(query) {
      const r = await store.listAlerts(query);
      return { alerts: r.alerts.map(toAlert), nextCursor: r.nextCursor };
    },
    async get(id) {
      const a = await store.getAlert(id);
      return a === null ? null : toAlert(a);
    },
    async evaluate() {
      for (let i = 0; i < 100 && evaluating !== null; i++) await evaluating;
      const run = evaluateOnce().finally(() => {
        evaluating = null;
        if (again) {
          again = false;
          soon();
        }
      });
      evaluating = run.catch(() => undefined);
      await run;
    },
    start() {
      if (running) return;
      running = true;
      stopping = new AbortController();
      soon();
    },
    stop() {
      running = false;
      stopping.abort();
      timer?.handle.cancel();
      timer = null;
      for (const r of retries) r.cancel();
      retries.clear();
    },
    async idle() {
      for (let i = 0; i < 1000 && inFlight.size > 0; i++) await Promise.allSettled([...inFlight]);
    },
    deliveryCounts: () => [...counts.values()].map((c) => ({ ...c })),
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
