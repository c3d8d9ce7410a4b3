/**
 * `GET /events` for the dashboard's pages: one same-origin SSE stream per page, authenticated by the
 * session cookie. Each event becomes a small frame naming only what changed (`task`, `agent`,
 * `intervention`, `alert`, `dependency` with the ids involved) — the page refetches what it shows,
 * coalesced, so the frames stay tiny however large the tasks are. Frames carry ids `<epoch>-<n>` and
 * the last 2,000 are kept: a page that reconnects with `Last-Event-ID` gets what it missed, or
 * `resync` (refetch everything) when that is no longer here (another process, too long ago).
 */
import { randomBytes } from 'node:crypto';
import type { StreamEvent } from '@rouse/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Coordinator } from '../../services/coordinator.js';
import type { SseHub, SseStream } from '../sse.js';

const KEEP = 2000;

interface Frame {
  n: number;
  type: string;
  data: string;
}

export function frameOf(event: StreamEvent): { type: string; data: Record<string, string | null> } {
  switch (event.type) {
    case 'task.created':
    case 'task.transition':
      return {
        type: 'task',
        data: { task: event.task.id, agent: event.task.agentId, status: event.task.status },
      };
    case 'task.progress':
      return { type: 'task', data: { task: event.taskId } };
    case 'agent.registered':
    case 'agent.status':
      return { type: 'agent', data: { agent: event.agent.id } };
    case 'agent.condition':
      return { type: 'agent', data: { agent: event.agentId } };
    case 'agent.fatal':
      return { type: 'agent', data: { agent: event.supervisorId } };
    case 'intervention':
      return {
        type: 'intervention',
        data: { agent: event.intervention.agentId, task: event.intervention.taskId },
      };
    case 'alert':
      return { type: 'alert', data: { alert: event.alert.id } };
  }
}

export class BrowserStreams {
  private readonly epoch = randomBytes(4).toString('hex');
  private readonly frames: Frame[] = [];
  private readonly open = new Set<SseStream>();
  private next = 1;
  private readonly unsubscribe: () => void;

  constructor(
    coordinator: Coordinator,
    private readonly sse: SseHub,
  ) {
    this.unsubscribe = coordinator.subscribe((event) => this.publish(event), { everyCoordinator: true });
  }

  /** Streams open now. */
  get clients(): number {
    return this.open.size;
  }

  private publish(event: StreamEvent): void {
    const { type, data } = frameOf(event);
    const frame = { n: this.next++, type, data: JSON.stringify(data) };
    this.frames.push(frame);
    if (this.frames.length > KEEP) this.frames.splice(0, this.frames.length - KEEP);
    for (const s of this.open) s.send(frame.type, frame.data, `${this.epoch}-${frame.n}`);
  }

  /** Take over the reply; replay from `lastEventId` (header or `?lastEventId=`), or tell the page to resync. */
  serve(request: FastifyRequest, reply: FastifyReply): void {
    const header = request.headers['last-event-id'];
    const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
    const last = typeof header === 'string' ? header : typeof query === 'string' ? query : '';
    const stream = this.sse.open(reply);
    if (stream.closed) return;
    this.open.add(stream);
    stream.signal.addEventListener('abort', () => this.open.delete(stream), { once: true });
    if (last === '') return;
    const [epoch, nText] = last.split('-');
    const n = Number(nText);
    const oldest = this.frames[0]?.n ?? this.next;
    if (epoch !== this.epoch || !Number.isInteger(n) || n < oldest - 1 || n >= this.next) {
      stream.send('resync', '{}', `${this.epoch}-${this.next - 1}`);
      return;
    }
    for (const f of this.frames) if (f.n > n) stream.send(f.type, f.data, `${this.epoch}-${f.n}`);
  }

  close(): void {
    this.unsubscribe();
  }
}
