/**
 * An agent's answers to the commands the coordinator delivered (`CommandAck`s, by command id): `done`
 * when the agent acted on one, `unsupported` when it cannot ({@link acksFor}), or, for a command
 * carried out later (a `checkpoint` waits for a safe point; a supervisor's restart of a child), what
 * came of it. The coordinator ends the intervention that sent the command accordingly, so an answer
 * should not wait: the watchdog measures how long a hung agent waits for help.
 *
 * {@link CommandAnswers} sends each answer as soon as it is queued, on a call of its own
 * (`POST /v1/agents/{id}/commands/acks`), not with the next heartbeat (an interval away, and a
 * heartbeat in flight would hold it too). Answers queued while that call is in flight go together
 * with the next call. What a failed call carried goes back to the queue, first in line, and the
 * agent is asked to beat soon: its heartbeat takes the answers ({@link CommandAnswers.take}). A
 * coordinator that predates the route (404) gets every answer with heartbeats from then on.
 *
 * Used by the SDK's worker and monitor, and by the agent host's supervisor.
 */
import type { AgentCommand, CommandAck, CommandType } from '@rouse/protocol';
import type { Client } from '../client.js';
import { RouseApiError } from '../errors.js';

/** Most answers one request carries. */
export const MAX_ANSWERS_PER_REQUEST = 100;
/** Most answers kept waiting; beyond it the oldest are dropped (a coordinator away for good must not grow this without bound). */
export const MAX_QUEUED_ANSWERS = 1000;
/** Default byte budget of the answers one request carries (as JSON). */
const DEFAULT_MAX_BYTES = 64 * 1024;

/**
 * Sends answers on their own call: null when there is nobody to send them to (not registered yet);
 * rejects when the call failed.
 */
export type SendAnswers = (acks: CommandAck[]) => Promise<unknown> | null;

export interface CommandAnswersOptions {
  /** The answers' own call. Without it, heartbeats carry every answer. */
  send?: SendAnswers;
  /** The coordinator has these answers (sent on their own call). */
  delivered?: (acks: readonly CommandAck[]) => void;
  /** A call failed or could not be made: the next heartbeat should come soon and carry what is queued. */
  fallBack?: () => void;
  /** Most bytes of answers (as JSON) one request carries; at least one answer always goes. @default 64 KiB */
  maxBytes?: number;
}

/**
 * The acks of the commands one heartbeat delivered, for an agent that acts on the types in `handled`:
 * `done` for those, `unsupported` for any other type. Commands without an id are not answered, nor
 * those of the types in `later`: whoever carries them out answers when it is done.
 */
export function acksFor(
  commands: readonly AgentCommand[],
  handled: readonly CommandType[],
  later: readonly CommandType[] = [],
): CommandAck[] {
  const out: CommandAck[] = [];
  for (const c of commands) {
    if (c.id === undefined || later.includes(c.type)) continue;
    out.push(
      handled.includes(c.type)
        ? { commandId: c.id, outcome: 'done' }
        : { commandId: c.id, outcome: 'unsupported', message: `this agent does not act on ${c.type}` },
    );
  }
  return out;
}

/** The answers' own call for an agent with this client and id, once it has both (it registered). */
export function sendAnswersAs(
  agent: () => { client: Client | undefined; agentId: string | undefined },
  timeoutMs: () => number,
): SendAnswers {
  return (acks) => {
    const { client, agentId } = agent();
    if (client === undefined || agentId === undefined) return null;
    return client.acknowledgeCommands(agentId, { acks }, { timeoutMs: timeoutMs() });
  };
}

export class CommandAnswers {
  private queue: CommandAck[] = [];
  /** The sending in flight, which also sends what is queued meanwhile. */
  private sending: Promise<void> | null = null;
  private stopped = false;
  /** False once the coordinator answered 404 (it has no such route), or without a `send`. */
  private ownCall: boolean;
  private readonly maxBytes: number;

  constructor(private readonly options: CommandAnswersOptions = {}) {
    this.ownCall = options.send !== undefined;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** Answers waiting to be sent. */
  get length(): number {
    return this.queue.length;
  }

  /** Queue answers and send them now (or with the call in flight's successor). */
  add(...acks: CommandAck[]): void {
    if (acks.length === 0) return;
    this.queue.push(...acks);
    this.bound();
    this.sendSoon();
  }

  /** Take the answers one request carries, oldest first (a heartbeat's: give back what it failed to send). */
  take(): CommandAck[] {
    const out: CommandAck[] = [];
    let bytes = 0;
    for (const ack of this.queue) {
      const b = Buffer.byteLength(JSON.stringify(ack)) + 1;
      if (out.length >= MAX_ANSWERS_PER_REQUEST || (out.length > 0 && bytes + b > this.maxBytes)) break;
      out.push(ack);
      bytes += b;
    }
    this.queue.splice(0, out.length);
    return out;
  }

  /** Answers a request failed to deliver: first in line again. */
  giveBack(acks: readonly CommandAck[]): void {
    this.queue.unshift(...acks);
    this.bound();
  }

  /** Send nothing more on their own; resolves once no call is in flight (a last heartbeat takes the rest). */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.sending !== null) await this.sending;
  }

  private bound(): void {
    if (this.queue.length > MAX_QUEUED_ANSWERS) this.queue = this.queue.slice(-MAX_QUEUED_ANSWERS);
  }

  private sendSoon(): void {
    if (this.sending !== null || this.stopped || !this.ownCall) return;
    this.sending = this.sendAll().then((sent) => {
      this.sending = null;
      // One queued after the last look at the queue, before this ran: it goes now too.
      if (sent && this.queue.length > 0) this.sendSoon();
    });
  }

  /** Send until the queue is empty; false when a call failed or could not be made. */
  private async sendAll(): Promise<boolean> {
    while (this.queue.length > 0 && !this.stopped && this.ownCall) {
      const acks = this.take();
      const call = this.options.send!(acks);
      try {
        if (call === null) throw new Error('not registered');
        await call;
      } catch (error) {
        if (error instanceof RouseApiError && error.status === 404) this.ownCall = false;
        this.giveBack(acks);
        this.options.fallBack?.();
        return false;
      }
      this.options.delivered?.(acks);
    }
    return true;
  }
}
