/**
 * Reads the coordinator's live event stream (`GET /v1/events`, SSE) and tells the story: claims,
 * completions, failures with their backoff, timeouts and why, cancellations, agents going quiet.
 */
import type { StreamEvent, Task, TaskEvent } from '@rouse/protocol';
import type { Client } from '@rouse/sdk';
import { formatDuration } from '../format/time.js';
import type { DemoBook } from './book.js';

type Listener = (task: Task, event: TaskEvent) => void;

export class Narrator {
  private readonly listeners = new Set<Listener>();
  private readonly waiters = new Map<string, () => void>();
  private readonly seenAgents = new Set<string>();
  private done: Promise<void> | undefined;

  constructor(
    private readonly book: DemoBook,
    private readonly client: Client,
  ) {}

  /** Start reading the stream in the background until `signal` aborts. */
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

  /** Call `fn` on every transition (after it is narrated). Returns the unsubscribe function. */
  onTransition(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves true once `agent.registered` for this agent id was seen, false after `timeoutMs`. */
  waitForAgent(agentId: string, timeoutMs: number): Promise<boolean> {
    if (this.seenAgents.has(agentId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.waiters.delete(agentId);
        resolve(false);
      }, timeoutMs);
      this.waiters.set(agentId, () => {
        clearTimeout(t);
        this.waiters.delete(agentId);
        resolve(true);
      });
    });
  }

  private handle(ev: StreamEvent): void {
    const { book } = this;
    const s = book.style;
    switch (ev.type) {
      case 'agent.registered': {
        if (!book.agentNames.has(ev.agent.id)) book.nameAgent(ev.agent.id, ev.agent.name);
        book.say(
          s.cyan('+'),
          `agent ${s.bold(ev.agent.name)} registered for ${ev.agent.taskTypes.join(', ')}`,
        );
        this.seenAgents.add(ev.agent.id);
        this.waiters.get(ev.agent.id)?.();
        return;
      }
      case 'agent.status': {
        if (ev.agent.status === 'lost') {
          book.say(
            s.red('☠'),
            `agent ${s.bold(book.agent(ev.agent.id))} is ${s.red('lost')}: its heartbeats stopped`,
          );
        }
        return;
      }
      case 'task.transition':
        this.transition(ev.task, ev.event);
        for (const fn of this.listeners) fn(ev.task, ev.event);
        return;
      default:
        return;
    }
  }

  private transition(task: Task, event: TaskEvent): void {
    const { book } = this;
    const s = book.style;
    const name = s.bold(book.task(task));
    const by = event.actor.startsWith('agent:') ? book.agent(event.actor.slice(6)) : event.actor;
    const retry = () =>
      task.nextAttemptAt !== null
        ? s.yellow(
            `retry ${task.attempt + 1}/${task.maxAttempts} in ${formatDuration(task.nextAttemptAt - event.at)} (backoff)`,
          )
        : s.red('final');
    switch (event.to) {
      case 'claimed':
        book.say(
          s.cyan('▸'),
          `${by} claimed ${name} (attempt ${task.attempt}/${task.maxAttempts}, version ${task.version})`,
        );
        return;
      case 'completed': {
        const took =
          task.startedAt !== null && task.finishedAt !== null
            ? ` in ${formatDuration(task.finishedAt - task.startedAt)}`
            : '';
        if (event.actor.startsWith('agent:')) book.say(s.green('✓'), `${name} completed by ${by}${took}`);
        else
          book.say(
            s.green('✓'),
            `${name} completed by the ${by} from the result the agent uploaded before vanishing (${event.reason})`,
          );
        return;
      }
      case 'failed': {
        const e = task.error;
        const why = e ? `${e.message}${e.retryable ? '' : s.red(' [non-retryable]')}` : event.reason;
        book.say(s.red('✗'), `${name} failed on attempt ${task.attempt}: ${why} — ${retry()}`);
        return;
      }
      case 'timeout':
        book.say(
          s.red('⏱'),
          `${name} ${s.red('timed out')}: ${this.timeoutText(task, event, by)} — ${retry()}`,
        );
        return;
      case 'cancelled':
        book.say(s.dim('⊘'), `${name} cancelled by ${by}${event.reason ? ` (${event.reason})` : ''}`);
        return;
      default:
        return;
    }
  }

  private timeoutText(task: Task, event: TaskEvent, by: string): string {
    const holder = this.book.agent(
      typeof event.details?.agentId === 'string' ? event.details.agentId : (task.agentId ?? null),
    );
    const t = task.timing;
    if (event.reason.includes('claim'))
      return `${holder} claimed it but never started it (claim timeout ${formatDuration(t.claimTimeoutMs)})`;
    if (event.reason.includes('heartbeat'))
      return `no heartbeat from ${holder} for ${formatDuration(t.heartbeatTimeoutMs)} (interval ${formatDuration(t.heartbeatIntervalMs)} × ${Math.round(t.heartbeatTimeoutMs / t.heartbeatIntervalMs)})`;
    if (event.reason.includes('deadline'))
      return `ran past its attempt deadline of ${formatDuration(t.attemptDeadlineMs ?? 0)}`;
    if (event.reason.includes('leave') || event.reason.includes('left'))
      return `${holder} left while holding it`;
    return `${event.reason} (by ${by})`;
  }
}
