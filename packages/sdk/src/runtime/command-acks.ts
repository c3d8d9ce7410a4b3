/**
 * Acknowledgements of the commands a heartbeat answer delivered: each command with an `id` is
 * answered by id — `done` when this agent acted on it, `unsupported` when it cannot, or, for the
 * commands carried out later (a `checkpoint` waits for a safe point), what came of it when it is done
 * (the coordinator ends the intervention that sent it accordingly).
 *
 * Answers go at once on a call of their own (`POST /v1/agents/{id}/commands/acks`), so an
 * intervention does not stay pending for a heartbeat interval; answers queued while that call is in
 * flight go with the next one. What a failed call carried stays queued for the next heartbeat
 * (`acks`), as do all answers when the coordinator predates the route (404: not tried again).
 */
import type { AgentCommand, CommandAck, CommandType } from '@rouse/protocol';
import type { Client } from '../client.js';
import { RouseApiError } from '../errors.js';

/** Most acks kept waiting (a coordinator that never answers must not grow this without bound). */
const MAX_PENDING = 100;

/**
 * Send answers on their own call: null when there is nobody to send them to (not registered, or
 * stopping); rejects when the call failed.
 */
export type SendAcks = (acks: CommandAck[]) => Promise<unknown> | null;

/** The answers' own call for a worker or a monitor: through its agent client, once it registered. */
export function sendAcksAs(
  agent: () => { client: Client | undefined; agentId: string | undefined },
  timeoutMs: () => number,
): SendAcks {
  return (acks) => {
    const { client, agentId } = agent();
    if (client === undefined || agentId === undefined) return null;
    return client.acknowledgeCommands(agentId, { acks }, { timeoutMs: timeoutMs() });
  };
}

export class CommandAcks {
  private pending: CommandAck[] = [];
  private sending = false;
  /** False once the coordinator answered 404 (it has no such route): heartbeats carry the answers. */
  private ownCall: boolean;

  /**
   * `handled`: the command types this agent acts on; anything else is acknowledged `unsupported`.
   * `later`: the types acknowledged by whoever carries them out, when it is done ({@link answer}).
   * `send`: the call of their own; without it, heartbeats carry every answer. `failed`: a call of
   * their own failed, so the next heartbeat should come soon.
   */
  constructor(
    private readonly handled: readonly CommandType[],
    private readonly later: readonly CommandType[] = [],
    private readonly send?: SendAcks,
    private readonly failed: () => void = () => undefined,
  ) {
    this.ownCall = send !== undefined;
  }

  /** Queue the acks of the commands just delivered (those without an id are not acknowledged), and send them. */
  delivered(commands: readonly AgentCommand[]): void {
    for (const c of commands) {
      if (c.id === undefined || this.later.includes(c.type)) continue;
      this.pending.push(
        this.handled.includes(c.type)
          ? { commandId: c.id, outcome: 'done' }
          : { commandId: c.id, outcome: 'unsupported', message: `this agent does not act on ${c.type}` },
      );
    }
    if (this.pending.length > MAX_PENDING) this.pending = this.pending.slice(-MAX_PENDING);
    this.sendNow();
  }

  /** Queue the ack of a command carried out later (see `later`), and send it. */
  answer(ack: CommandAck): void {
    this.pending.push(ack);
    if (this.pending.length > MAX_PENDING) this.pending = this.pending.slice(-MAX_PENDING);
    this.sendNow();
  }

  /** The acks for the next heartbeat (taken: give them back with `undelivered` if it fails). */
  take(): CommandAck[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  undelivered(acks: readonly CommandAck[]): void {
    this.pending = [...acks, ...this.pending].slice(-MAX_PENDING);
  }

  private sendNow(): void {
    if (this.sending || !this.ownCall || this.pending.length === 0) return;
    const acks = this.take();
    const call = this.send!(acks);
    if (call === null) {
      this.undelivered(acks);
      return;
    }
    this.sending = true;
    call.then(
      () => {
        this.sending = false;
        this.sendNow(); // answers queued while the call was in flight
      },
      (error: unknown) => {
        this.sending = false;
        if (error instanceof RouseApiError && error.status === 404) this.ownCall = false;
        this.undelivered(acks);
        this.failed();
      },
    );
  }
}
