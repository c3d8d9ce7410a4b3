/**
 * `rouse supervise` (docs/design.md §6.6): the supervisor is itself an agent (type
 * `rouse.supervisor`, key = its name, registered `exclusive`: one live supervisor per name). It starts
 * its programs' instances, sends one heartbeat for itself and all its children (their /proc samples,
 * states, restarts; for plain programs this entry is their heartbeat), carries out the commands the
 * coordinator routes to it for its children (`restart`, `terminate`, `wake` signals) — collected at
 * once by a long-poll (`commands/next`), and on its heartbeat responses — acknowledges each by id as
 * soon as it is carried out (`commands/acks`; with the next heartbeat when that call fails), and on
 * `stop()` stops every child (grace, then SIGKILL) and leaves.
 */
import { hostname } from 'node:os';
import {
  type AgentCommand,
  type CommandAck,
  type FatalReport,
  MAX_ACK_OUTPUT_CHARS,
  SUPERVISOR_AGENT_TYPE,
  type SupervisedChild,
} from '@rouse/protocol';
import { Client, CommandAnswers, RouseApiError, sendAnswersAs } from '@rouse/sdk';
import { carryOutCommand } from './child-commands.js';
import { splitChildren, takeWithin } from './heartbeat-body.js';
import type { ResolvedHostConfig } from './host-config.js';
import { PlainAgents } from './plain-agents.js';
import { ProcSampler } from './proc-stat.js';
import { type InstanceEvent, ProgramInstance } from './program-instance.js';

/** What the supervisor reports as it works (the CLI prints these; `--json` as JSON lines). */
export type SupervisorEvent =
  | InstanceEvent
  | { event: 'registered'; agentId: string; name: string; incarnation: number; heartbeatIntervalMs: number }
  | { event: 'command'; id: string; type: string; key: string | null }
  | { event: 'acknowledged'; id: string; outcome: CommandAck['outcome']; message: string | undefined }
  | { event: 'heartbeat_failed'; message: string }
  | { event: 'child_registration_failed'; key: string; message: string }
  | { event: 'stopping'; reason: string }
  | { event: 'left' };

export interface SupervisorOptions {
  config: ResolvedHostConfig;
  onEvent?: (event: SupervisorEvent) => void;
  /** Wall clock (ms). @default Date.now */
  now?: () => number;
  /** Called with each complete line a child writes (to echo children's output). @default none */
  onOutput?: (key: string, line: string) => void;
}

/** A heartbeat body above this is split in several (the coordinator allows 64 KiB per heartbeat). */
const MAX_BEAT_BYTES = 60 * 1024;
/** Command ids remembered to drop a command delivered twice (a `wake` to a plain child comes twice). */
const SEEN_COMMANDS = 1000;
const BEAT_TIMEOUT_MS = 10_000;
/** How long one commands long-poll waits (then it asks again). */
const COMMAND_POLL_MS = 25_000;

/** A refusal at start: another live supervisor holds the name. */
export class SupervisorNameInUseError extends Error {
  readonly code = 'agent_key_in_use';
}

export class Supervisor {
  readonly instances: ProgramInstance[] = [];
  private readonly enroll: Client;
  private client: Client | null = null;
  private agentId: string | null = null;
  private intervalMs = 5000;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  /** Beat again as soon as the beat in flight ends (acknowledgements wait that could not be sent). */
  private soon = false;
  private stopped = false;
  /** Ends the commands long-poll on stop. */
  private readonly polling = new AbortController();
  private readonly answers = new CommandAnswers({
    send: sendAnswersAs(
      () => ({ client: this.client ?? undefined, agentId: this.agentId ?? undefined }),
      () => BEAT_TIMEOUT_MS,
    ),
    delivered: (acks) => this.acknowledged(acks),
    fallBack: () => this.beatSoon(),
    maxBytes: MAX_BEAT_BYTES / 4,
  });
  private readonly fatal: FatalReport[] = [];
  private readonly seen: string[] = [];
  /** Plain children to leave once the ack of their terminate got through. */
  private readonly leaveAfterAck = new Map<string, ProgramInstance>();
  private readonly sampler = new ProcSampler();
  private readonly plainAgents: PlainAgents;
  private readonly now: () => number;
  private lastCpu = process.cpuUsage();
  private lastCpuAt: number;

  constructor(private readonly options: SupervisorOptions) {
    this.now = options.now ?? Date.now;
    this.lastCpuAt = this.now();
    const { config } = options;
    this.enroll = new Client({ url: config.url, token: config.token });
    this.plainAgents = new PlainAgents(this.enroll, (key, message) =>
      this.emit({ event: 'child_registration_failed', key, message }),
    );
    for (const program of config.programs) {
      for (let n = 1; n <= program.instances; n++) {
        this.instances.push(
          new ProgramInstance(program, n, config.name, {
            env: (i) => this.childEnv(i),
            now: this.now,
            emit: (e) => this.onInstanceEvent(e),
            started: (i) => this.onStarted(i),
            ...(options.onOutput !== undefined
              ? { line: (i: ProgramInstance, line: string) => options.onOutput?.(i.key, line) }
              : {}),
          }),
        );
      }
    }
  }

  /** Register (refused if the name is live elsewhere), start every instance, start heartbeating. */
  async start(): Promise<void> {
    await this.register();
    for (const i of this.instances) i.start();
    this.schedule(0);
    void this.pollCommands();
  }

  /**
   * Wait for commands without waiting for a heartbeat: a hung child's restart is carried out as soon
   * as the ladder sends it. Each command is handed out once, by this or by a heartbeat response.
   */
  private async pollCommands(): Promise<void> {
    while (!this.stopped) {
      const client = this.client;
      const agentId = this.agentId;
      try {
        if (client === null || agentId === null) throw new Error('not registered');
        const res = await client.nextCommands(
          agentId,
          { waitMs: COMMAND_POLL_MS },
          { signal: this.polling.signal },
        );
        for (const c of res.commands) void this.carryOut(c);
      } catch {
        // The coordinator is away, or the token changed (the heartbeat registers again): try again soon.
        if (this.stopped) return;
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(t);
            this.polling.signal.removeEventListener('abort', done);
            resolve();
          };
          const t = setTimeout(done, 1000);
          this.polling.signal.addEventListener('abort', done, { once: true });
        });
      }
    }
  }

  /** Beat now (or right after the beat in flight): an acknowledgement should not wait an interval. */
  private beatSoon(): void {
    if (this.stopped) return;
    if (this.beating !== null) {
      this.soon = true;
      return;
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.schedule(0);
  }

  /** Register as the supervisor of this name (again, after its token stopped working). */
  private async register(): Promise<void> {
    const { config } = this.options;
    let reg: Awaited<ReturnType<Client['registerAgent']>>;
    try {
      reg = await this.enroll.registerAgent({
        agentType: SUPERVISOR_AGENT_TYPE,
        key: config.name,
        name: config.name,
        host: hostname(),
        pid: process.pid,
        exclusive: true,
        labels: { programs: String(config.programs.length) },
      });
    } catch (err) {
      if (err instanceof RouseApiError && err.code === 'agent_key_in_use') {
        throw new SupervisorNameInUseError(
          `another supervisor named ${config.name} is running as agent ${String(err.details?.agentId ?? '?')}: stop it first, or give this one another name (a supervisor that was killed holds its name until its lease runs out)`,
        );
      }
      throw err;
    }
    this.agentId = reg.agent.id;
    this.client?.close();
    this.client = this.enroll.withToken(reg.token);
    this.intervalMs = reg.heartbeatIntervalMs;
    this.emit({
      event: 'registered',
      agentId: reg.agent.id,
      name: config.name,
      incarnation: reg.incarnation,
      heartbeatIntervalMs: reg.heartbeatIntervalMs,
    });
  }

  /** Stop every child (their stop signal, grace, SIGKILL to the group), then leave. */
  async stop(reason = 'stopped'): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.polling.abort();
    this.emit({ event: 'stopping', reason });
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await Promise.all(this.instances.map((i) => i.shutdown()));
    await this.beating?.catch(() => undefined);
    await this.answers.stop();
    // A last heartbeat carries the acks still owed (the children are stopped now).
    await this.beat().catch(() => undefined);
    await Promise.all(this.instances.map((i) => this.plainAgents.leave(i)));
    if (this.client !== null && this.agentId !== null) {
      await this.client.leave(this.agentId, { timeoutMs: 5000 }).catch(() => undefined);
    }
    this.enroll.close();
    this.client?.close();
    // Only a supervisor that registered has left anything (one refused at its start never joined).
    if (this.agentId !== null) this.emit({ event: 'left' });
  }

  private emit(event: SupervisorEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A listener's failure is not the supervisor's.
    }
  }

  private childEnv(i: ProgramInstance): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    // A child gets the enrollment token, never the supervisor's own or an admin token.
    delete env.ROUSE_ADMIN_TOKEN;
    delete env.ROUSE_TOKEN;
    return {
      ...env,
      ...i.program.env,
      ROUSE_URL: this.options.config.url,
      ROUSE_AGENT_TOKEN: this.options.config.token,
      ROUSE_AGENT_KEY: i.key,
      ROUSE_AGENT_TYPE: i.program.agentType,
      ROUSE_SUPERVISOR_ID: this.agentId ?? '',
    };
  }

  private onInstanceEvent(e: InstanceEvent): void {
    this.emit(e);
    if (e.event !== 'fatal') return;
    const i = this.instances.find((x) => x.key === e.key);
    if (i === undefined) return;
    this.fatal.push({
      agentKey: i.key,
      ...(i.agent !== null ? { agentId: i.agent.id } : {}),
      program: i.program.name,
      instance: i.instance,
      restarts: i.restarts,
      at: this.now(),
      lastExit: i.lastExit === null ? null : { code: i.lastExit.code, signal: i.lastExit.signal },
      output: i.ring.tail(MAX_ACK_OUTPUT_CHARS),
    });
    if (this.fatal.length > 100) this.fatal.shift();
  }

  /** A plain program's process started: register its agent (the next incarnation of its slot). */
  private onStarted(i: ProgramInstance): void {
    if (i.program.sdk || this.agentId === null || this.stopped) return;
    this.plainAgents.register(i, this.agentId);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.beating = this.beat()
        .catch(async (err: unknown) => {
          this.emit({ event: 'heartbeat_failed', message: (err as Error).message });
          // Its token stopped working (it was ended, or its slot taken over): register again. Its
          // children keep running meanwhile; the same name is the same agent id.
          if (err instanceof RouseApiError && err.status === 401 && !this.stopped) {
            await this.register().catch((e: unknown) =>
              this.emit({ event: 'heartbeat_failed', message: `registering again: ${(e as Error).message}` }),
            );
          }
        })
        .finally(() => {
          this.beating = null;
          const soon = this.soon;
          this.soon = false;
          // ±10 % jitter, as the SDK's heartbeats.
          this.schedule(soon ? 0 : Math.round(this.intervalMs * (0.9 + Math.random() * 0.2)));
        });
    }, delayMs);
  }

  private childEntries(): SupervisedChild[] {
    const running = this.instances.filter((i) => i.pid !== null).map((i) => i.pid!);
    const samples = this.sampler.sample(running, this.now());
    return this.instances.map((i) => i.entry(i.pid === null ? undefined : samples.get(i.pid)));
  }

  /** One heartbeat (split in several requests when the children's entries are many). */
  private async beat(): Promise<void> {
    const client = this.client;
    const agentId = this.agentId;
    if (client === null || agentId === null) return;
    const now = this.now();
    const cpu = process.cpuUsage(this.lastCpu);
    const cpuPercent =
      now > this.lastCpuAt ? ((cpu.user + cpu.system) / 1000 / (now - this.lastCpuAt)) * 100 : 0;
    this.lastCpu = process.cpuUsage();
    this.lastCpuAt = now;
    // A plain child whose registration failed (the coordinator was away) tries again.
    for (const i of this.instances) {
      if (!i.program.sdk && i.pid !== null && i.agent?.pid !== i.pid) this.onStarted(i);
    }
    // Acks and fatal reports carry output (up to 8 KiB each): as many as fit in half a body now,
    // the rest with the next heartbeat. The acks are this beat's until it fails (then they go back).
    const acks = this.answers.take();
    const fatal = takeWithin(this.fatal, 100, MAX_BEAT_BYTES / 4);
    const chunks = splitChildren(
      this.childEntries(),
      MAX_BEAT_BYTES - JSON.stringify({ acks, fatal }).length,
    );
    for (const [n, children] of chunks.entries()) {
      let res: Awaited<ReturnType<Client['agentHeartbeat']>>;
      try {
        res = await client.agentHeartbeat(
          agentId,
          {
            status: 'running',
            metrics: { rssBytes: process.memoryUsage().rss, cpuPercent: Math.round(cpuPercent * 10) / 10 },
            children,
            ...(n === 0 && acks.length > 0 ? { acks } : {}),
            ...(n === 0 && fatal.length > 0 ? { fatal } : {}),
          },
          { timeoutMs: BEAT_TIMEOUT_MS },
        );
      } catch (err) {
        if (n === 0) this.answers.giveBack(acks);
        throw err;
      }
      if (n === 0) {
        this.fatal.splice(0, fatal.length);
        this.acknowledged(acks);
      }
      if (res.heartbeatIntervalMs > 0) this.intervalMs = res.heartbeatIntervalMs;
      for (const c of res.commands) void this.carryOut(c);
    }
  }

  private ack(ack: CommandAck, leaveChild?: ProgramInstance): void {
    if (leaveChild !== undefined) this.leaveAfterAck.set(ack.commandId, leaveChild);
    this.emit({ event: 'acknowledged', id: ack.commandId, outcome: ack.outcome, message: ack.message });
    this.answers.add(ack);
  }

  /** The coordinator has these acknowledgements: a terminated plain child's agent leaves now. */
  private acknowledged(acks: readonly CommandAck[]): void {
    for (const a of acks) {
      const i = this.leaveAfterAck.get(a.commandId);
      if (i !== undefined) {
        this.leaveAfterAck.delete(a.commandId);
        void this.plainAgents.leave(i);
      }
    }
  }

  /** Carry out a command for a child, and send its acknowledgement. */
  private async carryOut(c: AgentCommand): Promise<void> {
    const id = c.id;
    if (id === undefined || this.seen.includes(id)) return;
    this.seen.push(id);
    if (this.seen.length > SEEN_COMMANDS) this.seen.shift();
    const i =
      this.instances.find((x) => c.agentKey !== undefined && x.key === c.agentKey) ??
      this.instances.find((x) => c.agentId !== undefined && x.agent?.id === c.agentId);
    this.emit({ event: 'command', id, type: c.type, key: i?.key ?? null });
    if (i !== undefined) {
      await i.serially(async () => {
        const ack = await carryOutCommand(i, c, id);
        // A terminated plain child's agent leaves once the coordinator has its acknowledgement.
        if (ack !== null) this.ack(ack, c.type === 'terminate' && !i.program.sdk ? i : undefined);
      });
      return;
    }
    // A command for the supervisor itself, or for a child it does not run.
    this.ack({
      commandId: id,
      outcome: 'unsupported',
      message:
        c.agentId === undefined
          ? `the supervisor does not act on ${c.type} for itself`
          : `no child ${c.agentKey ?? c.agentId} under this supervisor`,
    });
  }
}
