/**
 * A supervisor's answers to the commands it carried out for its children (`CommandAck`s, by command
 * id). Each is sent as soon as it is queued, on a call of its own (`commands/acks`): the watchdog
 * measures how long a hung agent waits for help, and a heartbeat in flight (tens of ms with many
 * children on a busy store) would hold the answer, then the next heartbeat too. Answers queued while
 * a call is in flight go together with the next call. What a failed call carried goes back to the
 * queue, and the supervisor's next heartbeat takes it ({@link CommandAnswers.take}), sent at once.
 */
import type { CommandAck } from '@rouse/protocol';
import { takeWithin } from './heartbeat-body.js';

/** Most answers one request carries. */
const MAX_PER_REQUEST = 100;

export interface CommandAnswersOptions {
  /**
   * Send these answers. Null when there is nobody to send them to yet (not registered); rejects when
   * the call failed.
   */
  send: (acks: CommandAck[]) => Promise<unknown> | null;
  /** The coordinator has these answers. */
  delivered: (acks: readonly CommandAck[]) => void;
  /** A call failed or could not be made: the heartbeat should carry what is queued, soon. */
  fallBack: () => void;
  /** Most bytes of answers (as JSON) one request carries; at least one answer always goes. */
  maxBytes: number;
}

export class CommandAnswers {
  private readonly queue: CommandAck[] = [];
  /** The sending in flight, which also sends what is queued meanwhile. */
  private sending: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: CommandAnswersOptions) {}

  /** Answers waiting to be sent. */
  get length(): number {
    return this.queue.length;
  }

  /** Queue an answer and send it now (or with the call in flight's successor). */
  add(ack: CommandAck): void {
    this.queue.push(ack);
    this.sendSoon();
  }

  /** Take the answers one request carries, oldest first (a heartbeat's; give back what it failed to send). */
  take(): CommandAck[] {
    const acks = takeWithin(this.queue, MAX_PER_REQUEST, this.options.maxBytes);
    this.queue.splice(0, acks.length);
    return acks;
  }

  /** Answers a request failed to deliver: first in line again. */
  giveBack(acks: readonly CommandAck[]): void {
    this.queue.unshift(...acks);
  }

  /** Send nothing more on their own; resolves once no call is in flight (a last heartbeat takes the rest). */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.sending !== null) await this.sending;
  }

  private sendSoon(): void {
    if (this.sending !== null || this.stopped) return;
    this.sending = this.sendAll().then((sent) => {
      this.sending = null;
      // One queued after the last look at the queue, before this ran: it goes now too.
      if (sent && this.queue.length > 0) this.sendSoon();
    });
  }

  /** Send until the queue is empty; false when a call failed or could not be made. */
  private async sendAll(): Promise<boolean> {
    while (this.queue.length > 0 && !this.stopped) {
      const acks = this.take();
      const call = this.options.send(acks);
      try {
        if (call === null) throw new Error('not registered');
        await call;
      } catch {
        this.giveBack(acks);
        this.options.fallBack();
        return false;
      }
      this.options.delivered(acks);
    }
    return true;
  }
}
