/**
 * `GET /events` for the dashboard's pages: one same-origin SSE stream per page, authenticated by the
 * session cookie. Events are not forwarded one by one: the streams gather what changed and send it
 * as one `changes` frame per window naming only the ids involved — `{"tasks": [...], "agents": [...],
 * "interventions": n, "alerts": n}`, a list cut at 100 ids and then marked `"more": true` — so a burst
 * of ten thousand transitions costs a stream a few frames, and the page refetches what it shows when
 * a frame concerns it. One window is open at a time, shared by every stream, and one timer closes it
 * and sends its frame to all, so the pages refetch together and share what the server computes for
 * them (see `read-sharing.ts`). The window is 250 ms after a quiet spell and doubles, up to two
 * seconds, while the changes keep coming (straight to two seconds after a window with more ids than
 * a frame names): a page shows a change within a quarter of a second when there are few, and
 * refetches at most every two seconds when there are many (a refetch costs the browser a render:
 * five pages on a small machine refetching every 250 ms took CPU from the coordinator they were
 * watching).
 *
 * Frames carry ids `<epoch>-<n>` (n counts events). The frames of the last minute are kept, so a
 * page that reconnects with `Last-Event-ID` gets what it missed in one frame, or `resync` (refetch
 * everything) when that is no longer here (another process, too long ago). Keeping frames rather
 * than events costs nothing per event: under load a window gathers thousands of events into
 * at most 200 ids, where a ring of the last events kept an object per event alive just long enough
 * to be promoted out of V8's young generation (with five pages open that tripled the coordinator's
 * garbage collection time in the throughput workload).
 */
import { randomBytes } from 'node:crypto';
import type { StreamEvent } from '@rouse/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Coordinator } from '../../services/coordinator.js';
import type { SseHub, SseStream } from '../sse.js';

const FLUSH_MS = 250;
const BUSY_FLUSH_MS = 2000;
const MAX_IDS = 100;
/**
 * How long closed windows are kept for replay. The pacing closes at most one window per 500 ms (a
 * 250 ms window needs a quiet spell as long before it), so this keeps at most 120 frames.
 */
export const KEEP_MS = 60_000;
/** How long the streams go on listening after the last page left (a reconnecting page gets replay). */
export const LINGER_MS = 30_000;

/** What a `changes` frame says. */
interface FrameData {
  tasks: string[];
  agents: string[];
  interventions: number;
  alerts: number;
  more?: boolean;
}

/** Changes gathered over a window of events (`first`..`last`), or merged from kept frames. */
class Changes {
  readonly tasks = new Set<string>();
  readonly agents = new Set<string>();
  more = false;
  interventions = 0;
  alerts = 0;
  last = 0;

  constructor(readonly first: number) {}

  private task(id: string): void {
    if (this.tasks.size < MAX_IDS) this.tasks.add(id);
    else if (!this.tasks.has(id)) this.more = true;
  }

  private agent(id: string): void {
    if (this.agents.size < MAX_IDS) this.agents.add(id);
    else if (!this.agents.has(id)) this.more = true;
  }

  /** Event `n`: what it touched (no allocation beyond the sets' first 100 ids). */
  add(event: StreamEvent, n: number): void {
    this.last = n;
    switch (event.type) {
      case 'task.created':
      case 'task.transition':
        this.task(event.task.id);
        if (event.task.agentId !== null) this.agent(event.task.agentId);
        break;
      case 'task.progress':
        this.task(event.taskId);
        break;
      case 'agent.registered':
      case 'agent.status':
        this.agent(event.agent.id);
        break;
      case 'agent.condition':
        this.agent(event.agentId);
        break;
      case 'agent.fatal':
        this.agent(event.supervisorId);
        break;
      case 'intervention':
        this.interventions++;
        this.agent(event.intervention.agentId);
        if (event.intervention.taskId !== null) this.task(event.intervention.taskId);
        break;
      case 'alert':
        this.alerts++;
        break;
    }
  }

  /** A kept frame's changes, up to event `last`. */
  merge(data: FrameData, last: number): void {
    this.last = last;
    for (const id of data.tasks) this.task(id);
    for (const id of data.agents) this.agent(id);
    if (data.more === true) this.more = true;
    this.interventions += data.interventions;
    this.alerts += data.alerts;
  }

  frame(): string {
    const data: FrameData = {
      tasks: [...this.tasks],
      agents: [...this.agents],
      interventions: this.interventions,
      alerts: this.alerts,
    };
    if (this.more) data.more = true;
    return JSON.stringify(data);
  }
}

/** A window's frame, as sent. */
interface Kept {
  first: number;
  last: number;
  /** When it was sent (monotonic ms). */
  at: number;
  data: string;
}

export class BrowserStreams {
  /** Names one unbroken run of listening: ids of another run (before a gap) get `resync`. */
  private epoch = randomBytes(4).toString('hex');
  /** The open window's changes; null until an event comes after the last flush. */
  private window: Changes | null = null;
  /** Closed windows, oldest first: together they cover every event from `kept[0].first` on. */
  private kept: Kept[] = [];
  private readonly clients = new Set<SseStream>();
  private next = 1;
  private timer: NodeJS.Timeout | null = null;
  private windowMs = FLUSH_MS;
  /** When the last window closed (monotonic ms), to tell a steady flow from a quiet spell. */
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  /** Whether the last window named more ids than a frame holds. */
  private lastWindowFull = false;
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
    // What was kept belongs to the run that ends here: a page coming back resyncs (another epoch).
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.window = null;
    this.kept = [];
  }

  private lastPageLeft(): void {
    if (this.linger !== null) clearTimeout(this.linger);
    this.linger = setTimeout(() => this.stopListening(), LINGER_MS);
    this.linger.unref();
  }

  private publish(event: StreamEvent): void {
    const n = this.next++;
    this.window ??= new Changes(n);
    this.window.add(event, n);
    if (this.timer !== null) return;
    // Wire-level pacing, not domain time: a window opened right after the last one closed means the
    // changes keep coming, and the next frame waits longer.
    const now = performance.now();
    // A window that overflowed (more ids than a frame names) is a burst: the pages refetch
    // everything they show anyway, so the next one waits the longest at once.
    this.windowMs =
      now - this.lastFlushAt >= this.windowMs
        ? FLUSH_MS
        : this.lastWindowFull
          ? BUSY_FLUSH_MS
          : Math.min(BUSY_FLUSH_MS, this.windowMs * 2);
    this.timer = setTimeout(() => this.flush(), this.windowMs);
    this.timer.unref();
  }

  /** Close the window: keep its frame (also while no page is open, for one that reconnects) and send it. */
  private flush(): void {
    this.timer = null;
    const now = performance.now();
    this.lastFlushAt = now;
    const window = this.window;
    this.window = null;
    this.lastWindowFull = window?.more ?? false;
    if (window === null) return;
    const data = window.frame();
    this.kept.push({ first: window.first, last: window.last, at: now, data });
    let drop = 0;
    while ((this.kept[drop]?.at ?? now) < now - KEEP_MS) drop++;
    if (drop > 0) this.kept.splice(0, drop);
    const id = `${this.epoch}-${window.last}`;
    for (const stream of this.clients) stream.send('changes', data, id);
  }

  /** The last event in a closed window (the events after it are in the open one). */
  private get closedUpTo(): number {
    return (this.window?.first ?? this.next) - 1;
  }

  /**
   * What a page that saw events up to `n` missed in closed windows: a frame, null when it missed
   * nothing there (the open window reaches it with everyone's next frame), or 'resync' when part of
   * it is no longer kept.
   */
  private missedSince(n: number): string | null | 'resync' {
    if (n >= this.closedUpTo) return null;
    const oldest = this.kept[0];
    if (oldest === undefined || oldest.first > n + 1) return 'resync';
    const missed = new Changes(n + 1);
    for (const k of this.kept) if (k.last > n) missed.merge(JSON.parse(k.data) as FrameData, k.last);
    return missed.frame();
  }

  /**
   * Take over the reply; replay from `lastEventId` (header or `?lastEventId=`), or tell the page to
   * resync. With `stillAllowed`, the stream ends once it says no (the session ended: sse.ts).
   */
  serve(request: FastifyRequest, reply: FastifyReply, stillAllowed?: () => Promise<boolean>): void {
    const header = request.headers['last-event-id'];
    const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
    const last = typeof header === 'string' ? header : typeof query === 'string' ? query : '';
    const stream = this.sse.open(reply, stillAllowed === undefined ? {} : { stillAllowed });
    if (stream.closed) return;
    this.clients.add(stream);
    this.listen();
    stream.signal.addEventListener(
      'abort',
      () => {
        this.clients.delete(stream);
        if (this.clients.size === 0) this.lastPageLeft();
      },
      { once: true },
    );
    if (last === '') return;
    const [epoch, nText] = last.split('-');
    const n = Number(nText);
    const missed =
      epoch === this.epoch && Number.isInteger(n) && n >= 0 && n < this.next ? this.missedSince(n) : 'resync';
    if (missed === 'resync') stream.send('resync', '{}', `${this.epoch}-${this.next - 1}`);
    else if (missed !== null) stream.send('changes', missed, `${this.epoch}-${this.closedUpTo}`);
  }

  close(): void {
    this.stopListening();
  }
}
