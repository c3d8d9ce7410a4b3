/**
 * The agents of a supervisor's plain programs (those that do not use the SDK): each process that
 * starts registers as the next incarnation of its slot (key = the instance's key, supervised by the
 * supervisor), and leaves when the supervisor is done with it. Such an agent never calls the
 * coordinator itself: the supervisor's heartbeat entry for the child is its heartbeat.
 */
import { hostname } from 'node:os';
import type { Client } from '@rouse/sdk';
import type { ProgramInstance } from './program-instance.js';

export class PlainAgents {
  /** Instances whose registration is under way. */
  private readonly registering = new Set<ProgramInstance>();

  /** `enroll`: the client with the enrollment token; `failed`: a registration was refused or failed. */
  constructor(
    private readonly enroll: Client,
    private readonly failed: (key: string, message: string) => void,
  ) {}

  /** Register the agent of `i`'s process now running (none while one is under way for it). */
  register(i: ProgramInstance, supervisorId: string): void {
    const pid = i.pid;
    if (pid === null || this.registering.has(i)) return;
    this.registering.add(i);
    void this.enroll
      .registerAgent({
        agentType: i.program.agentType,
        key: i.key,
        name: i.key,
        host: hostname(),
        pid,
        supervisorId,
      })
      .then(
        (reg) => {
          // A process that exited meanwhile is not this agent's.
          if (i.pid === pid)
            i.agent = { id: reg.agent.id, incarnation: reg.incarnation, token: reg.token, pid };
        },
        (err: unknown) => this.failed(i.key, (err as Error).message),
      )
      .finally(() => this.registering.delete(i));
  }

  /** The agent of `i` leaves (its task-free slot is ended; nothing when it has none). */
  async leave(i: ProgramInstance): Promise<void> {
    const agent = i.agent;
    if (agent === null) return;
    i.agent = null;
    const c = this.enroll.withToken(agent.token);
    await c.leave(agent.id, { timeoutMs: 5000 }).catch(() => undefined);
    c.close();
  }
}
