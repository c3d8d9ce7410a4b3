/**
 * The watchdog act's storyteller: reads the coordinator's live event stream (`GET /v1/events`) and
 * tells what the watchdog saw (`agent.condition`), what its ladder did and how each attempt ended
 * (`intervention`), the alerts it raised (`alert`), agents coming back (`agent.registered`) and a
 * supervisor giving up (`agent.fatal`), with the agents' short names.
 */
import type { Intervention, JsonObject, StreamEvent } from '@rouse/protocol';
import type { Client } from '@rouse/sdk';
import type { DemoBook } from './book.js';

type ConditionEvent = Extract<StreamEvent, { type: 'agent.condition' }>;

const MiB = 1024 * 1024;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const seconds = (ms: unknown): string => {
  const n = num(ms);
  return n === null ? '?' : `${(n / 1000).toFixed(1)} s`;
};

export class WatchdogNarrator {
  private done: Promise<void> | undefined;
  /** The state each intervention was last told in (an event repeats for evidence-only changes). */
  private readonly told = new Map<string, string>();
  private readonly alertsSeen = new Set<string>();
  /** What each agent's open dependency_down says (`llm-api is rate_limited`), by agent id. */
  private readonly outages = new Map<string, string>();
  private readonly incarnations = new Map<string, number>();

  constructor(
    private readonly book: DemoBook,
    private readonly client: Client,
  ) {}

  start(signal: AbortSignal): void {
    this.done = (async () => {
      try {
        for await (const ev of this.client.events({ signal })) this.handle(ev);
      } catch (err) {
        if (!signal.aborted) this.book.say('!', `event stream ended: ${(err as Error).message}`);
      }
    })();
  }

  async stopped(): Promise<void> {
    await this.done;
  }

  private name(agentId: string): string {
    return this.book.style.bold(this.book.agent(agentId));
  }

  private handle(ev: StreamEvent): void {
    const { book } = this;
    const s = book.style;
    switch (ev.type) {
      case 'agent.registered': {
        const a = ev.agent;
        if (a.agentType === 'supervisor' || a.key === null || !a.key?.startsWith('demo-host/')) {
          book.nameAgent(a.id, a.name);
          return;
        }
        book.nameAgent(a.id, a.key.split('/').pop() as string);
        const before = this.incarnations.get(a.id);
        this.incarnations.set(a.id, a.incarnation);
        if (before === undefined && a.incarnation === 1)
          book.say(s.cyan('+'), `${this.name(a.id)} registered (${a.agentType}, under its supervisor)`);
        else book.say(s.cyan('+'), `${this.name(a.id)} registered again: incarnation ${a.incarnation}`);
        return;
      }
      case 'agent.condition':
        this.condition(ev);
        return;
      case 'intervention':
        this.intervention(ev.intervention);
        return;
      case 'alert': {
        const a = ev.alert;
        if (this.alertsSeen.has(a.id)) return;
        this.alertsSeen.add(a.id);
        book.say(
          s.yellow('!'),
          `alert raised: [${a.severity.toUpperCase()}] ${a.group.condition} for ${a.group.agentType} → channels ${a.channels.join(', ') || '(all)'}`,
        );
        return;
      }
      case 'agent.fatal':
        book.say(
          s.red('☠'),
          `the supervisor gave up on ${s.bold(ev.report.agentKey.split('/').pop() as string)}: its restart budget is spent`,
        );
        return;
      default:
        return;
    }
  }

  private condition(ev: ConditionEvent): void {
    const { book } = this;
    const s = book.style;
    const who = this.name(ev.agentId);
    const e = ev.condition.evidence;
    if (ev.state === 'closed') {
      if (ev.condition.condition === 'dependency_down') this.outages.delete(ev.agentId);
      book.say(
        s.dim('·'),
        s.dim(`${book.agent(ev.agentId)}: ${ev.condition.condition} closed (${ev.closeReason ?? 'cleared'})`),
      );
      return;
    }
    switch (ev.condition.condition) {
      case 'progress_stalled':
        book.say(
          s.yellow('▸'),
          `${who} stalled (progress unchanged ${seconds(e.unchangedForMs)}, threshold ${seconds(e.thresholdMs)})`,
        );
        return;
      case 'heartbeat_timeout':
        book.say(
          s.red('▸'),
          `${who} went silent: no heartbeat for ${seconds(e.gapMs)} (every ${seconds(e.expectedIntervalMs)}, timeout ${seconds(e.timeoutMs)})`,
        );
        return;
      case 'resource_runaway': {
        const rss = num(e.rssBytes);
        const limit = num(e.rssLimitBytes);
        const what =
          e.rule === 'rss_limit' && rss !== null && limit !== null
            ? `RSS ${Math.round(rss / MiB)} MiB > rss_limit ${Math.round(limit / MiB)} MiB`
            : String(e.rule ?? 'resources');
        book.say(s.red('▸'), `${who} runaway: ${what}`);
        return;
      }
      case 'dependency_down': {
        const deps = Array.isArray(e.dependencies) ? (e.dependencies as JsonObject[]) : [];
        const text =
          deps.map((d) => `${String(d.name)} is ${String(d.state)}`).join(', ') || 'a dependency is down';
        this.outages.set(ev.agentId, text);
        book.say(s.yellow('▸'), `${who}: ${text} (dependency_down)`);
        return;
      }
      default:
        book.say(s.yellow('▸'), `${who}: ${ev.condition.condition}`);
    }
  }

  private intervention(i: Intervention): void {
    if (this.told.get(i.id) === i.state) return;
    const wasHeld = this.told.get(i.id) === 'held';
    this.told.set(i.id, i.state);
    const { book } = this;
    const s = book.style;
    const who = this.name(i.agentId);
    const plain = book.agent(i.agentId);
    const rung = i.rung === null ? 'by hand' : `rung ${i.rung + 1}, attempt ${i.attempt}`;
    // The act's policy sends SIGUSR1 with every send_signal rung (the intervention does not record it).
    const signal = i.action === 'send_signal' ? ' SIGUSR1' : '';
    switch (i.state) {
      case 'pending':
        if (wasHeld) book.say(s.cyan('▸'), `ladder: the held ${i.action} of ${who} acts now (${rung})`);
        else book.say(s.cyan('▸'), `ladder: ${i.action}${signal} → ${who} (${rung}) for ${i.condition}`);
        return;
      case 'held':
        book.say(
          s.yellow('⏸'),
          `${i.action === 'snapshot_and_restart' ? 'restart' : i.action} of ${who} held: ${this.outages.get(i.agentId) ?? 'a dependency it needs is down'} (a restart would not help)`,
        );
        return;
      case 'succeeded':
        switch (i.action) {
          case 'wake':
          case 'send_signal':
            book.say(s.green('✓'), `wake cured ${who}: its ${i.condition} closed`);
            return;
          case 'snapshot_and_restart':
            book.say(
              s.green('✓'),
              `restart of ${who} succeeded: the new incarnation heartbeats (${i.condition} closed)`,
            );
            return;
          case 'terminate':
            book.say(s.green('✓'), `${who} terminated for good (${i.condition})`);
            return;
          case 'alert':
            book.say(s.green('✓'), `alert for ${plain}'s ${i.condition} delivered`);
            return;
          default:
            book.say(s.green('✓'), `${i.action} of ${who} succeeded`);
            return;
        }
      case 'failed':
        book.say(s.red('✗'), `${i.action} of ${who} did not work: ${i.reason}`);
        return;
      case 'skipped':
        book.say(s.dim('·'), `${i.action} of ${plain} skipped: ${i.reason}`);
        return;
    }
  }
}
