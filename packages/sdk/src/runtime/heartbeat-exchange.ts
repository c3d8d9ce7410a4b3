/**
 * One agent heartbeat, sent and answered, as the worker and the monitor both make it. What was queued
 * since the last beat rides on it: the dependency reports and the answers to commands (both given
 * back when the beat fails). A failed beat is counted and reported; a refused token (a newer
 * incarnation of the slot registered, or the agent was ended) stops the agent. Each command an answer
 * delivers is handed to the agent, then answered: `done` for the types it acts on, `unsupported` for
 * the others, a `checkpoint` when its snapshot is taken.
 */
import type {
  AgentCommand,
  AgentHeartbeatRequest,
  AgentHeartbeatResponse,
  CommandType,
} from '@rouse/protocol';
import type { Client } from '../client.js';
import { systemNow } from '../clock.js';
import { isTokenRefused, type RouseApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { acksFor, CommandAnswers, sendAnswersAs } from './command-answers.js';
import { DependencyTracker } from './dependencies.js';
import { HeartbeatStats } from './heartbeat-stats.js';
import { notRegistered } from './snapshots.js';

export interface HeartbeatExchangeOptions {
  /** The agent's client (its own token) and id; undefined until it registered. */
  agent(): { client: Client | undefined; agentId: string | undefined };
  /** How long one heartbeat request may take. */
  timeoutMs(): number;
  /** The command types the agent acts on (answered `done`); `checkpoint` is answered when taken. */
  actsOn: readonly CommandType[];
  logger: Logger;
  /** Beat soon: a command answer could not be sent on its own call, the heartbeat carries it. */
  beatSoon(): void;
  /**
   * A try failed (the first already tells of a dead connection: the retries need not be waited for),
   * and again when the beat failed for good, but for a refused token.
   */
  failed(error: unknown): void;
  /** The beat failed (an `error` event, op `heartbeat`). */
  error(error: unknown): void;
  /** The coordinator refused the agent's token (`error`, a 401): stop. */
  refused(error: RouseApiError): void;
  /** The coordinator answered `part` (the whole request unless it was split), before its commands. */
  answered(part: AgentHeartbeatRequest, res: AgentHeartbeatResponse): void;
  /** A command the answer delivered. */
  command(command: AgentCommand): void;
}

export class HeartbeatExchange {
  readonly dependencies = new DependencyTracker(systemNow);
  readonly stats = new HeartbeatStats(systemNow);
  /** Answers to commands: at once on a call of their own; a failed one is left to a heartbeat, soon. */
  readonly answers: CommandAnswers;

  constructor(private readonly options: HeartbeatExchangeOptions) {
    this.answers = new CommandAnswers({
      send: sendAnswersAs(options.agent, options.timeoutMs),
      fallBack: () => options.beatSoon(),
    });
  }

  /**
   * Send `req` with what is queued, in the parts `split` makes of it (the first carries the queued
   * reports and answers). True when every part was answered.
   */
  async send(
    req: AgentHeartbeatRequest,
    split: (req: AgentHeartbeatRequest) => AgentHeartbeatRequest[] = (r) => [r],
  ): Promise<boolean> {
    const o = this.options;
    const deps = this.dependencies.take();
    if (deps.reports.length > 0) req.dependencies = deps.reports;
    const acks = this.answers.take();
    if (acks.length > 0) req.acks = acks;
    const { client, agentId } = o.agent();
    const timeoutMs = o.timeoutMs();
    let first = true;
    for (const part of split(req)) {
      let res: AgentHeartbeatResponse;
      try {
        if (client === undefined || agentId === undefined) throw notRegistered('agent');
        res = await client.agentHeartbeat(agentId, part, { timeoutMs, onRetry: (e) => o.failed(e) });
      } catch (error) {
        if (first) {
          this.dependencies.undelivered(deps);
          this.answers.giveBack(acks);
        }
        this.stats.failed();
        o.error(error);
        if (isTokenRefused(error)) {
          o.logger.warn(
            { agentId, message: (error as Error).message },
            'the coordinator refused this agent token (replaced by a new incarnation?): stopping',
          );
          o.refused(error as RouseApiError);
        } else {
          o.failed(error);
        }
        return false;
      }
      if (first) {
        this.dependencies.delivered(deps);
        this.stats.ok();
      }
      first = false;
      o.answered(part, res);
      for (const command of res.commands ?? []) o.command(command);
      this.answers.add(...acksFor(res.commands ?? [], o.actsOn, ['checkpoint']));
    }
    return true;
  }
}
