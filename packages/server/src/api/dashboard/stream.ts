/**
 * `GET /events` for the dashboard's pages: one same-origin SSE stream per page, authenticated by the
 * session cookie. Events are not forwarded one by one: the streams gather what changed and send it
 * as one `changes` frame per window naming only the ids involved — `{"tasks": [...], "agents": [...],
 * "interventions": n, "alerts": n}`, a list cut at 100 ids and then marked `"more": true` — so a burst
 * of ten thousand transitions costs a stream a few frames, and the page refetches what it shows when
 * a frame concerns it. Every stream is flushed by one timer, so the pages refetch together and share
 * what the server computes for them (see `read-sharing.ts`). The window is 250 ms after a quiet spell and
 * doubles, up to two seconds, while the changes keep coming: a page shows a change within a quarter
 * of a second when there are few, and refetches at most every two seconds when there are many (a
 * refetch costs the browser a render: five pages on a small machine refetching every 250 ms took
 * CPU from the coordinator they were watching). Frames carry
 * ids `<epoch>-<n>` (n counts events); the last 2,000 events are kept (in a ring), so a page that
 * reconnects with `Last-Event-ID` gets what it missed in one frame, or `resync` (refetch everything)
 * when that is no longer here (another process, too long ago).
 */
import { randomBytes } from 'node:crypto';
import type { StreamEvent } from '@rouse/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Coordinator } from '../../services/coordinator.js';
import type { SseHub, SseStream } from '../sse.js';

const KEEP = 2000;
const FLUSH_MS = 250;
const BUSY_FLUSH_MS = 2000;
const MAX_IDS = 100;
/** How long the streams go on listening after the last page left (a reconnecting page gets replay). */
export const LINGER_MS = 30_000;

/** What one event touched. */
export interface Touched {
  tasks: string[];
  agents: string[];
  interventions: number;
  alerts: number;
}

export function touchedBy(event: StreamEvent): Touched {
  const t: Touched = { tasks: [], agents: [], interventions: 0, alerts: 0 };
  switch (event.type) {
    case 'task.created':
    case 'task.transition':
      t.tasks.push(event.task.id);
      if (event.task.agentId !== null) t.agents.push(event.task.agentId);
      break;
    case 'task.progress':
      t.tasks.push(event.taskId);
      break;
    case 'agent.registered':
    case 'agent.status':
      t.agents.push(event.agent.id);
      break;
    case 'agent.condition':
      t.agents.push(event.agentId);
      break;
    case 'agent.fatal':
      t.agents.push(event.supervisorId);
      break;
    case 'intervention':
      t.interventions = 1;
      t.agents.push(event.intervention.agentId);
      if (event.intervention.taskId !== null) t.tasks.push(event.intervention.taskId);
      break;
    case 'alert':
      t.alerts = 1;
      break;
  }
  return t;
}

/** Changes gathered for one stream until its next frame. */
class Pending {
  readonly tasks = new Set<string>();
  readonly agents = new Set<string>();
  more = false;
  interventions = 0;
  alerts = 0;
  last = 0;

  add(t: Touched, n: number): void {
    for (const id of t.tasks)
      if (this.tasks.size < MAX_IDS) this.tasks.add(id);
      else this.more = true;
    for (const id of t.agents)
      if (this.agents.size < MAX_IDS) this.agents.add(id);
      else this.more = true;
    this.interventions += t.interventions;
    this.alerts += t.alerts;
    this.last = n;
  }

  frame(): string {
    return JSON.stringify({
      tasks: [...this.tasks],
      agents: [...this.agents],
      interventions: this.interventions,
      alerts: this.alerts,
      ...(this.more ? { more: true } : {}),
    });
  }
}

interface Client {
  stream: SseStream;
  pending: Pending | null;
}

export class BrowserStreams {
  /** Names one unbroken run of listening: ids of another run (before a gap) get `resync`. */
  private epoch = randomBytes(4).toString('hex');
  /** The last KEEP events' changes: event n at n % KEEP. */
  private readonly ring: (Touched | undefined)[] = new Array(KEEP);
  private readonly clients = new Set<Client>();
  private next = 1;
  private timer: NodeJS.Timeout | null = null;
  private windowMs = FLUSH_MS;
  /** When the last window closed (monotonic ms), to tell a steady flow from a quiet spell. */
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  /**
   * Set while a page is open. The streams listen to every coordinator's events only then: with
   * PostgreSQL, a coordinator with such a listener makes the others relay everything they do, and
   * nobody should pay for that while no dashboard is looked at.
   */
  private unsubscribe: (() => void) | null = null;
  /** After the last page left, listening goes on this long, so a page that reconnects gets replay. */
  private linger: NodeJS.Timeout | null = null;

  constructor(
    private readonly coordinator: Pick<Coordinator, 'subscribe'>,
    private readonly sse: Pick<SseHub, 'open'>,
  ) {}

  /** Streams open now. */
  get open(): number {
    return this.clients.size;
  }

  /**
   * Events seen so far: anything computed before this moved may predate a change. NaN while no page
   * is open (nothing is listened to, so nothing can be vouched for: equal to no earlier count).
   */
  get seq(): number {
    return this.unsubscribe === null ? Number.NaN : this.next - 1;
  }

  private listen(): void {
    if (this.linger !== null) clearTimeout(this.linger);
    this.linger = null;
    if (this.unsubscribe !== null) return;
    this.epoch = randomBytes(4).toString('hex');
    this.unsubscribe = this.coordinator.subscribe((event) => this.publish(event), { everyCoordinator: true });
  }

  private stopListening(): void {
    if (this.linger !== null) clearTimeout(this.linger);
    this.linger = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private lastPageLeft(): void {
    if (this.linger !== null) clearTimeout(this.linger);
    this.linger = setTimeout(() => this.stopListening(), LINGER_MS);
    this.linger.unref();
  }

  private publish(event: StreamEvent): void {
    const n = this.next++;
    const touched = touchedBy(event);
    this.ring[n % KEEP] = touched;
    if (this.clients.size === 0) return;
    for (const c of this.clients) {
      c.pending ??= new Pending();
      c.pending.add(touched, n);
    }
    if (this.timer !== null) return;
    // Wire-level pacing, not domain time: a window opened right after the last one closed means the
    // changes keep coming, and the next frame waits longer.
    const now = performance.now();
    this.windowMs =
      now - this.lastFlushAt < this.windowMs ? Math.min(BUSY_FLUSH_MS, this.windowMs * 2) : FLUSH_MS;
    this.timer = setTimeout(() => this.flush(), this.windowMs);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = null;
    this.lastFlushAt = performance.now();
    for (const c of this.clients) {
      const p = c.pending;
      c.pending = null;
      if (p !== null) c.stream.send('changes', p.frame(), `${this.epoch}-${p.last}`);
    }
  }

  /** Take over the reply; replay from `lastEventId` (header or `?lastEventId=`), or tell the page to resync. */
  serve(request: FastifyRequest, reply: FastifyReply): void {
    const header = request.headers['last-event-id'];
    const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
    const last = typeof header === 'string' ? header : typeof query === 'string' ? query : '';
    const stream = this.sse.open(reply);
    if (stream.closed) return;
    const client: Client = { stream, pending: null };
    this.clients.add(client);
    this.listen();
    stream.signal.addEventListener(
      'abort',
      () => {
        this.clients.delete(client);
        if (this.clients.size === 0) this.lastPageLeft();
      },
      { once: true },
    );
    if (last === '') return;
    const [epoch, nText] = last.split('-');
    const n = Number(nText);
    const oldest = Math.max(1, this.next - KEEP);
    if (epoch !== this.epoch || !Number.isInteger(n) || n < oldest - 1 || n >= this.next) {
      stream.send('resync', '{}', `${this.epoch}-${this.next - 1}`);
      return;
    }
    const missed = new Pending();
    for (let e = n + 1; e < this.next; e++) {
      const touched = this.ring[e % KEEP];
      if (touched !== undefined) missed.add(touched, e);
    }
    if (missed.last > 0) stream.send('changes', missed.frame(), `${this.epoch}-${missed.last}`);
  }

  close(): void {
    this.stopListening();
    if (this.timer !== null) clearTimeout(this.timer);
  }
}
