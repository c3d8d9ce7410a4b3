/**
 * Acknowledgements of the commands a heartbeat answer delivered: each command with an `id` is
 * answered by id on the next heartbeat (`acks`) — `done` when this agent acted on it, `unsupported`
 * when it cannot, or, for the commands carried out later (a `checkpoint` waits for a safe point), what
 * came of it when it is done (the coordinator ends the intervention that sent it accordingly). Acks whose
 * heartbeat failed are sent again with the next one.
 */
import type { AgentCommand, CommandAck, CommandType } from '@rouse/protocol';

/** Most acks kept waiting (a coordinator that never answers must not grow this without bound). */
const MAX_PENDING = 100;

export class CommandAcks {
  private pending: CommandAck[] = [];

  /**
   * `handled`: the command types this agent acts on; anything else is acknowledged `unsupported`.
   * `later`: the types acknowledged by whoever carries them out, when it is done ({@link answer}).
   */
  constructor(
    private readonly handled: readonly CommandType[],
    private readonly later: readonly CommandType[] = [],
  ) {}

  /** Queue the acks of the commands just delivered (those without an id are not acknowledged). */
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
  }

  /** Queue the ack of a command carried out later (see `later`). */
  answer(ack: CommandAck): void {
    this.pending.push(ack);
    if (this.pending.length > MAX_PENDING) this.pending = this.pending.slice(-MAX_PENDING);
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
}
