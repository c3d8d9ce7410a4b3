/**
 * `GET /events` for the dashboard's pages: one same-origin SSE stream per page, authenticated by the
 * session cookie. Events are not forwarded one by one: each stream gathers what changed and sends it
 * at most every 250 ms as one `changes` frame naming only the ids involved — `{"tasks": [...],
 * "agents": [...], "interventions": n, "alerts": n}`, a list cut at 100 ids and then marked `"more":
 * true` — so a burst of ten thousand transitions costs a stream a few frames, and the page refetches
 * what it shows when a frame concerns it. Frames carry ids `<epoch>-<n>` (n counts events); the last
 * 2,000 events are kept, so a page that reconnects with `Last-Event-ID` gets what it missed in one
 * frame, or `resync` (refetch everything) when that is no longer here (another process, too long ago).
 */
import { randomBytes } from 'node:crypto';
import type { StreamEvent } from '@rouse/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Coordinator } from '../../services/coordinator.js';
import type { SseHub, SseStream } from '../sse.js';

const KEEP = 2000;
const FLUSH_MS = 250;
const MAX_IDS = 100;

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
  timer: NodeJS.Timeout | null;
}

export class BrowserStreams {
  private readonly epoch = randomBytes(4).toString('hex');
  private readonly events: { n: number; touched: Touched }[] = [];
  private readonly clients = new Set<Client>();
  private next = 1;
  private readonly unsubscribe: () => void;

  constructor(
    coordinator: Coordinator,
    private readonly sse: SseHub,
  ) {
    this.unsubscribe = coordinator.subscribe((event) => this.publish(event), { everyCoordinator: true });
  }

  /** Streams open now. */
  get open(): number {
    return this.clients.size;
  }

  private publish(event: StreamEvent): void {
    const n = this.next++;
    const touched = touchedBy(event);
    this.events.push({ n, touched });
    if (this.events.length > KEEP) this.events.splice(0, this.events.length - KEEP);
    for (const c of this.clients) this.gather(c, touched, n);
  }

  private gather(c: Client, touched: Touched, n: number): void {
    c.pending ??= new Pending();
    c.pending.add(touched, n);
    if (c.timer !== null) return;
    // A wire-level pacing timer, not domain time.
    c.timer = setTimeout(() => this.flush(c), FLUSH_MS);
    c.timer.unref();
  }

  private flush(c: Client): void {
    c.timer = null;
    const p = c.pending;
    c.pending = null;
    if (p !== null) c.stream.send('changes', p.frame(), `${this.epoch}-${p.last}`);
  }

  /** Take over the reply; replay from `lastEventId` (header or `?lastEventId=`), or tell the page to resync. */
  serve(request: FastifyRequest, reply: FastifyReply): void {
    const header = request.headers['last-event-id'];
    const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
    const last = typeof header === 'string' ? header : typeof query === 'string' ? query : '';
    const stream = this.sse.open(reply);
    if (stream.closed) return;
    const client: Client = { stream, pending: null, timer: null };
    this.clients.add(client);
    stream.signal.addEventListener(
      'abort',
      () => {
        this.clients.delete(client);
        if (client.timer !== null) clearTimeout(client.timer);
      },
      { once: true },
    );
    if (last === '') return;
    const [epoch, nText] = last.split('-');
    const n = Number(nText);
    const oldest = this.events[0]?.n ?? this.next;
    if (epoch !== this.epoch || !Number.isInteger(n) || n < oldest - 1 || n >= this.next) {
      stream.send('resync', '{}', `${this.epoch}-${this.next - 1}`);
      return;
    }
    const missed = new Pending();
    for (const e of this.events) if (e.n > n) missed.add(e.touched, e.n);
    if (missed.last > 0) stream.send('changes', missed.frame(), `${this.epoch}-${missed.last}`);
  }

  close(): void {
    this.unsubscribe();
    for (const c of this.clients) if (c.timer !== null) clearTimeout(c.timer);
  }
}
