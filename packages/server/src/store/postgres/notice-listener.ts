/**
 * Notices between coordinators: `publishClaimable` (and `publishStreamNotice`) is a `NOTIFY` on a
 * channel of the schema; every store sharing the database hears it through ONE dedicated `LISTEN`
 * connection per channel, opened when the first subscriber arrives and closed with the last. When
 * that connection drops it comes back by itself with backoff (100 ms doubling to 5 s); nothing here
 * ever throws into the process. Notices sent while it was down are lost — claimable ones are
 * wake-ups (long polls also end on their own timeout), stream notices feed live streams only.
 */
import pg from 'pg';
import type { ClaimableNotice, StreamNotice, StreamRef } from '../store.js';

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7900;

/** The notice as payloads under the NOTIFY limit (a long type list is split; `origin` rides on each). */
export function noticePayloads(notice: ClaimableNotice): string[] {
  const origin = notice.origin === undefined ? {} : { origin: notice.origin };
  const encode = (types: string[]) => JSON.stringify({ types, ...origin });
  const out: string[] = [];
  let types: string[] = [];
  for (const type of notice.types) {
    if (types.length > 0 && Buffer.byteLength(encode([...types, type])) > MAX_PAYLOAD_BYTES) {
      out.push(encode(types));
      types = [];
    }
    types.push(type);
  }
  out.push(encode(types));
  return out;
}

export function parseClaimableNotice(payload: string | undefined): ClaimableNotice | null {
  try {
    const value = JSON.parse(payload ?? '') as { types?: unknown; origin?: unknown };
    if (!Array.isArray(value.types) || !value.types.every((t) => typeof t === 'string')) return null;
    const notice: ClaimableNotice = { types: value.types as string[] };
    if (typeof value.origin === 'string') notice.origin = value.origin;
    return notice;
  } catch {
    return null;
  }
}

/**
 * A stream notice as payloads under the NOTIFY limit: `{"o": origin, "r": [ref, ...]}`, each ref a
 * short array: `["t", taskId, seq]`, `["p", taskId]`, `["a", agentId, "registered" | "status"]` or
 * `["c", conditionSeq]`.
 */
export function streamNoticePayloads(notice: StreamNotice): string[] {
  const out: string[] = [];
  let refs: string[] = [];
  let bytes = 0;
  const flush = () => {
    out.push(`{"o":${JSON.stringify(notice.origin)},"r":[${refs.join(',')}]}`);
    refs = [];
    bytes = 0;
  };
  for (const ref of notice.refs) {
    const item = JSON.stringify(encodeStreamRef(ref));
    const size = Buffer.byteLength(item) + 1;
    if (refs.length > 0 && bytes + size > MAX_PAYLOAD_BYTES - 200) flush();
    refs.push(item);
    bytes += size;
  }
  if (refs.length > 0) flush();
  return out;
}

function encodeStreamRef(ref: StreamRef): (string | number)[] {
  switch (ref.kind) {
    case 'transition':
      return ['t', ref.taskId, ref.seq];
    case 'progress':
      return ['p', ref.taskId];
    case 'agent':
      return ['a', ref.agentId, ref.event];
    case 'condition':
      return ['c', ref.seq];
    case 'intervention':
      return ['i', ref.id];
    case 'alert':
      return ['l', ref.id];
  }
}

function parseStreamRef(item: unknown): StreamRef | null {
  if (!Array.isArray(item)) return null;
  if (item[0] === 'c' && Number.isInteger(item[1])) return { kind: 'condition', seq: item[1] };
  if (typeof item[1] !== 'string') return null;
  if (item[0] === 't' && Number.isInteger(item[2]))
    return { kind: 'transition', taskId: item[1], seq: item[2] };
  if (item[0] === 'p') return { kind: 'progress', taskId: item[1] };
  if (item[0] === 'i') return { kind: 'intervention', id: item[1] };
  if (item[0] === 'l') return { kind: 'alert', id: item[1] };
  if (item[0] === 'a' && (item[2] === 'registered' || item[2] === 'status'))
    return { kind: 'agent', agentId: item[1], event: item[2] };
  return null;
}

export function parseStreamNotice(payload: string | undefined): StreamNotice | null {
  try {
    const value = JSON.parse(payload ?? '') as { o?: unknown; r?: unknown };
    if (typeof value.o !== 'string' || !Array.isArray(value.r)) return null;
    const refs: StreamRef[] = [];
    for (const item of value.r as unknown[]) {
      const ref = parseStreamRef(item);
      if (ref === null) return null;
      refs.push(ref);
    }
    return { origin: value.o, refs };
  } catch {
    return null;
  }
}

/** One channel's `LISTEN` connection and its subscribers; `parse` turns a payload into a notice. */
export class NoticeListener<N> {
  private readonly listeners = new Set<(notice: N) => void>();
  private client: pg.Client | null = null;
  /** Grows with every connection, so events of an abandoned one are ignored. */
  private generation = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private backoffMs = MIN_BACKOFF_MS;
  private closed = false;
  private ready: Promise<void> = Promise.resolve();
  private markReady: () => void = () => undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    readonly channel: string,
    private readonly parse: (payload: string | undefined) => N | null,
  ) {}

  subscribe(listener: (notice: N) => void): () => void {
    if (this.closed) return () => undefined;
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
      this.stop();
    };
  }

  /**
   * Resolves once this store is listening (or is not trying to): a publisher awaits it, so its own
   * subscribers hear what it publishes. Bounded by the connect timeout.
   */
  listening(): Promise<void> {
    return this.ready;
  }

  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    return this.stop();
  }

  private start(): void {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    void this.connect();
  }

  private stop(): Promise<void> {
    this.generation += 1;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.markReady();
    const client = this.client;
    this.client = null;
    return client === null ? Promise.resolve() : client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    const client = new pg.Client(this.config);
    const lost = () => {
      if (generation !== this.generation) return;
      this.client = null;
      client.end().catch(() => undefined);
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (msg) => {
      if (generation !== this.generation || msg.channel !== this.channel) return;
      const notice = this.parse(msg.payload);
      if (notice !== null) this.deliver(notice);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch {
      lost();
      // Do not hold publishers up while the database is away.
      this.markReady();
      return;
    }
    if (generation !== this.generation) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoffMs = MIN_BACKOFF_MS;
    this.markReady();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.listeners.size === 0 || this.retryTimer !== null) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    // Real timers on purpose: reconnecting is I/O, not domain time.
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed && this.listeners.size > 0) void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  private deliver(notice: N): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(structuredClone(notice));
      } catch {
        // a listener's failure is its own; the others still hear the notice
      }
    }
  }
}
