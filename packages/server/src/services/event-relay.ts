/**
 * The live event stream across coordinators (docs/design.md §7: the dashboard is live through SSE; §8:
 * coordinators are stateless replicas behind any load balancer). A client of `GET /v1/events` on one
 * coordinator sees what every coordinator of the store does — task creations and transitions, task
 * progress, agent registrations, status changes, conditions, interventions and alerts:
 *
 * - Each coordinator announces with its presence (every shard renewal) whether it has such clients.
 *   While another one has, it publishes what it does — named only (task and history seq, task, agent),
 *   coalesced per event-loop turn, one publish in flight at a time (PostgreSQL `NOTIFY`). While nobody
 *   listens it publishes nothing, so the hot path pays nothing for the feature.
 * - A coordinator with clients listens for those notices, reads back what they name (history entries
 *   in one read per notice, tasks and agents by id, a few at a time), in notice order, and hands the
 *   events to its `everyCoordinator` listeners. Each carries the task or agent as read then, a moment
 *   after.
 *
 * So a new client hears the other coordinators within two shard renewals (its coordinator announces
 * it, then they read it: two thirds of the shard lease TTL). A notice lost while the database
 * connection is down is a gap in a live feed, not in state: tasks, histories and agents stay whole.
 */
import type { Agent, Intervention, StreamEvent, Task, TaskEvent } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { toAlert } from '../store/alert-row.js';
import type { AlertRecord, Store, StreamNotice, StreamRef, TransitionRef } from '../store/store.js';
import type { EventBus } from './event-bus.js';
import { BACKGROUND_STORE_CALLS, forEachLimited } from './limited.js';
import { createNoticeBatcher } from './notice-batcher.js';
import { conditionEvent } from './watchdog/condition-event.js';

export interface EventRelay {
  /**
   * This coordinator wrote these history entries of `taskId` (a creation is entry 1): publish them
   * while another coordinator listens.
   */
  relay(taskId: string, entries: readonly Pick<TaskEvent, 'seq'>[]): void;
  /** The task's progress or phase changed here. */
  relayProgress(taskId: string): void;
  /** An agent registered, or its status changed, here. */
  relayAgent(agentId: string, event: 'registered' | 'status'): void;
  /** A condition was opened or closed here (its seq). */
  relayCondition(seq: number): void;
  /** An intervention was opened or changed here. */
  relayIntervention(id: string): void;
  /** An alert was opened or changed here. */
  relayAlert(id: string): void;
  start(): void;
  stop(): void;
  /** Notices published and received (for stats). */
  readonly stats: { published: number; received: number };
}

export function createEventRelay(deps: {
  store: Store;
  bus: EventBus;
  clock: Clock;
  origin: string;
  /** Another live coordinator has clients on its event stream (as of the last shard renewal). */
  othersListening: () => boolean;
  logger: Logger;
}): EventRelay {
  const { store, bus, clock, origin, logger } = deps;
  const stats = { published: 0, received: 0 };
  let stopped = true;
  let unsubscribe: (() => void) | null = null;
  /** Reads of received notices, chained so that their events go out in notice order. */
  let delivering: Promise<void> = Promise.resolve();
  const outbox = createNoticeBatcher<StreamRef>({
    publish(refs) {
      stats.published++;
      return store.publishStreamNotice({ origin, refs });
    },
    onFailure: (err, refs) => logger.warn({ err, refs: refs.length }, 'could not relay stream events'),
  });
  const add = (ref: StreamRef): void => outbox.add(ref);

  /** The events a notice names, read back from the store, in the notice's order. */
  async function eventsOf(refs: readonly StreamRef[]): Promise<StreamEvent[]> {
    const entries: TransitionRef[] = [];
    const taskIds = new Set<string>();
    const agentIds = new Set<string>();
    const conditionSeqs: number[] = [];
    const interventionIds = new Set<string>();
    const alertIds = new Set<string>();
    for (const r of refs) {
      if (r.kind === 'transition') entries.push({ taskId: r.taskId, seq: r.seq });
      else if (r.kind === 'progress') taskIds.add(r.taskId);
      else if (r.kind === 'condition') conditionSeqs.push(r.seq);
      else if (r.kind === 'intervention') interventionIds.add(r.id);
      else if (r.kind === 'alert') alertIds.add(r.id);
      else agentIds.add(r.agentId);
    }
    const taskById = new Map<string, Task>();
    const agentById = new Map<string, Agent>();
    const interventionById = new Map<string, Intervention>();
    const alertById = new Map<string, AlertRecord>();
    /**
     * One store read by id each, a few at a time: a notice names everything one coordinator did in an
     * event-loop turn (hundreds of progress reports in a busy fleet).
     */
    const byId: (() => Promise<void>)[] = [
      ...[...taskIds].map((id) => () => store.getTask(id).then(keepIn(taskById, id))),
      ...[...agentIds].map((id) => () => store.getAgent(id).then(keepIn(agentById, id))),
      ...[...interventionIds].map((id) => () => store.getIntervention(id).then(keepIn(interventionById, id))),
      ...[...alertIds].map((id) => () => store.getAlert(id).then(keepIn(alertById, id))),
    ];
    const [transitions, conditions] = await Promise.all([
      store.readTransitions(entries),
      conditionSeqs.length === 0 ? Promise.resolve([]) : store.readConditions(conditionSeqs),
      forEachLimited(byId, BACKGROUND_STORE_CALLS, (read) => read()),
    ]);
    const conditionBySeq = new Map(conditions.map((c) => [c.seq, c]));
    const entryAt = new Map(transitions.map((t) => [`${t.task.id}\u0000${t.event.seq}`, t]));
    const out: StreamEvent[] = [];
    for (const r of refs) {
      if (r.kind === 'transition') {
        const t = entryAt.get(`${r.taskId}\u0000${r.seq}`);
        if (t === undefined) continue;
        // Creation is its own kind of event in the stream, as on the coordinator that created it.
        if (t.event.from === null && t.event.to === 'created')
          out.push({ type: 'task.created', at: t.event.at, task: t.task });
        else out.push({ type: 'task.transition', at: t.event.at, task: t.task, event: t.event });
      } else if (r.kind === 'progress') {
        const task = taskById.get(r.taskId);
        if (task === undefined) continue;
        const at = task.progressChangedAt ?? clock.now();
        out.push({ type: 'task.progress', at, taskId: task.id, progress: task.progress, phase: task.phase });
      } else if (r.kind === 'condition') {
        const c = conditionBySeq.get(r.seq);
        if (c === undefined) continue;
        out.push(conditionEvent(c, c.closedAt ?? c.since));
      } else if (r.kind === 'intervention') {
        // Read as it is now: several changes in one notice are one event, the latest state.
        const intervention = interventionById.get(r.id);
        if (intervention === undefined) continue;
        interventionById.delete(r.id);
        out.push({ type: 'intervention', at: intervention.endedAt ?? clock.now(), intervention });
      } else if (r.kind === 'alert') {
        const alert = alertById.get(r.id);
        if (alert === undefined) continue;
        alertById.delete(r.id);
        out.push({ type: 'alert', at: clock.now(), alert: toAlert(alert) });
      } else {
        const agent = agentById.get(r.agentId);
        if (agent === undefined) continue;
        if (r.event === 'registered') out.push({ type: 'agent.registered', at: agent.registeredAt, agent });
        else out.push({ type: 'agent.status', at: clock.now(), agent });
      }
    }
    return out;
  }

  function receive(notice: StreamNotice): void {
    if (notice.origin === origin || bus.everyCoordinatorListeners === 0) return;
    stats.received++;
    delivering = delivering
      .then(async () => {
        for (const event of await eventsOf(notice.refs)) bus.publishRemote(event);
      })
      .catch((err: unknown) => {
        logger.warn({ err, refs: notice.refs.length }, 'could not read relayed stream events');
      });
  }

  /** Listen for the others' notices exactly while this coordinator has clients. */
  function follow(): void {
    const wanted = !stopped && bus.everyCoordinatorListeners > 0;
    if (wanted && unsubscribe === null) unsubscribe = store.onStreamNotices(receive);
    else if (!wanted && unsubscribe !== null) {
      unsubscribe();
      unsubscribe = null;
    }
  }
  bus.onListenersChanged(follow);

  const relaying = (): boolean => !stopped && deps.othersListening();

  return {
    relay(taskId, entries) {
      if (entries.length === 0 || !relaying()) return;
      for (const e of entries) add({ kind: 'transition', taskId, seq: e.seq });
    },
    relayProgress(taskId) {
      if (relaying()) add({ kind: 'progress', taskId });
    },
    relayAgent(agentId, event) {
      if (relaying()) add({ kind: 'agent', agentId, event });
    },
    relayCondition(seq) {
      if (relaying()) add({ kind: 'condition', seq });
    },
    relayIntervention(id) {
      if (relaying()) add({ kind: 'intervention', id });
    },
    relayAlert(id) {
      if (relaying()) add({ kind: 'alert', id });
    },
    start() {
      stopped = false;
      follow();
    },
    stop() {
      stopped = true;
      outbox.stop();
      follow();
    },
    stats,
  };
}

/** A read's row kept under its id; a row gone since (`null`) is left out. */
function keepIn<T>(rows: Map<string, T>, id: string): (row: T | null) => void {
  return (row) => {
    if (row !== null) rows.set(id, row);
  };
}
