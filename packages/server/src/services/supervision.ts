/**
 * The coordinator's side of `rouse supervise` (docs/design.md §6.6): a supervisor is an agent whose
 * heartbeat also carries its children (`children`) and the children it gave up on (`fatal`).
 *
 * - A **plain** child (a process that does not use the SDK) cannot heartbeat: its entry in the
 *   supervisor's heartbeat is its heartbeat — alive = running, progress = the program's output regex,
 *   else its output activity (`outputAt`), metrics = the supervisor's /proc samples. It is recorded in
 *   the same batched store write as the supervisor's own beat, and only for a child registered with
 *   this supervisor as its `supervisorId`, in the incarnation the entry names.
 * - An **SDK** child heartbeats itself: its entry renews nothing (a SIGSTOPped child is running to
 *   the supervisor, but must go `lost`).
 * - A `fatal` report is published once per report as an `agent.fatal` event on the event bus (the
 *   alerting hook: subscribe to it), logged and raised as a critical alert; only a supervisor's
 *   reports count, each for one of its own children. The supervisor re-sends a report until a heartbeat
 *   carrying it got through, so a report may be seen twice only when an answer was lost.
 */
import {
  type AgentHeartbeatRequest,
  type FatalReport,
  type JsonObject,
  SUPERVISOR_AGENT_TYPE,
  type SupervisedChild,
} from '@rouse/protocol';
import type { AgentHeartbeatInput } from '../store/store.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { heartbeatInput } from './watchdog/heartbeat-input.js';

/** A plain child's beat, ready for the write batcher. */
export interface ChildBeat {
  child: SupervisedChild & { agentId: string; incarnation: number };
  input: AgentHeartbeatInput;
}

export interface Supervision {
  /**
   * The heartbeats a supervisor's report stands for: one per plain, running child of this supervisor
   * (checked against the store, then remembered per child incarnation). Entries of other agents'
   * children, of SDK children or of children not running are left out.
   */
  childBeats(supervisorId: string, children: readonly SupervisedChild[]): Promise<ChildBeat[]>;
  /**
   * Children the supervisor gave up on: an `agent.fatal` event, a log line and a critical alert for
   * each. Reports count only from a supervisor (`rouse.supervisor`), and one naming an agent only when
   * that agent is this supervisor's child; the others are logged and ignored.
   */
  fatal(supervisorId: string, supervisorType: string, reports: readonly FatalReport[]): void;
}

/** Child incarnations whose supervisor was checked, at most this many remembered. */
const MAX_REMEMBERED = 100_000;

export function createSupervision(
  ctx: Pick<CoordinatorContext, 'store' | 'clock' | 'bus' | 'logger' | 'policies' | 'watchdog' | 'alerts'>,
): Supervision {
  // `${agentId}/${incarnation}` → its supervisor and type (fixed for an incarnation).
  const known = new Map<string, { supervisorId: string | null; agentType: string }>();

  async function identity(agentId: string, incarnation: number) {
    const k = `${agentId}/${incarnation}`;
    const hit = known.get(k);
    if (hit !== undefined) return hit;
    const agent = await ctx.store.getAgent(agentId);
    if (agent === null || agent.incarnation !== incarnation) return null;
    if (known.size >= MAX_REMEMBERED) known.clear();
    const found = { supervisorId: agent.supervisorId, agentType: agent.agentType };
    known.set(k, found);
    return found;
  }

  return {
    async childBeats(supervisorId, children) {
      const beats: ChildBeat[] = [];
      for (const child of children) {
        if (!child.plain || child.state !== 'running') continue;
        if (child.agentId === undefined || child.incarnation === undefined) continue;
        const who = await identity(child.agentId, child.incarnation);
        if (who === null || who.supervisorId !== supervisorId) {
          ctx.logger.debug(
            { supervisorId, agentId: child.agentId, agentKey: child.agentKey },
            'a supervisor reported a child that is not its own (or not in that incarnation): ignored',
          );
          continue;
        }
        const policy = ctx.policies.current().forAgentType(who.agentType);
        const req: AgentHeartbeatRequest = {
          status: 'running',
          ...(child.phase !== undefined ? { phase: child.phase } : {}),
          ...(child.rssBytes !== undefined || child.cpuPercent !== undefined
            ? {
                metrics: {
                  ...(child.rssBytes !== undefined ? { rssBytes: child.rssBytes } : {}),
                  ...(child.cpuPercent !== undefined ? { cpuPercent: child.cpuPercent } : {}),
                },
              }
            : {}),
        };
        const input = heartbeatInput(
          child.agentId,
          child.incarnation,
          req,
          policy,
          ctx.watchdog.agents.leaseMsFor(child.agentId, policy),
        );
        // Progress: the regex's, else output activity (the stall clock moves when it writes).
        const value = child.progress ?? child.outputAt;
        if (value !== null) input.progress = { value, phase: child.phase ?? null };
        beats.push({ child: { ...child, agentId: child.agentId, incarnation: child.incarnation }, input });
      }
      return beats;
    },

    fatal(supervisorId, supervisorType, reports) {
      if (supervisorType !== SUPERVISOR_AGENT_TYPE) {
        ctx.logger.warn(
          { agentId: supervisorId, agentType: supervisorType, reports: reports.length },
          `fatal reports from an agent that is not a supervisor (type ${SUPERVISOR_AGENT_TYPE}): ignored`,
        );
        return;
      }
      /** A person is told (critical, every channel): nothing will start this program again by itself. */
      const raiseFatal = async (report: FatalReport): Promise<void> => {
        const agent = report.agentId === undefined ? null : await ctx.store.getAgent(report.agentId);
        // A report naming an agent stands only for a child of this supervisor (as childBeats checks).
        if (report.agentId !== undefined && agent?.supervisorId !== supervisorId) {
          ctx.logger.warn(
            { supervisorId, agentId: report.agentId, agentKey: report.agentKey },
            'a supervisor reported as fatal an agent that is not its child: ignored',
          );
          return;
        }
        ctx.logger.error(
          {
            supervisorId,
            agentKey: report.agentKey,
            agentId: report.agentId,
            program: report.program,
            restarts: report.restarts,
            lastExit: report.lastExit,
          },
          'a supervised program spent its restart budget: fatal, it will not be restarted',
        );
        ctx.bus.publish({ type: 'agent.fatal', at: ctx.clock.now(), supervisorId, report });
        const exit =
          report.lastExit === null ? 'no exit seen' : `last exit ${JSON.stringify(report.lastExit)}`;
        await ctx.alerts.raise({
          agentId: report.agentId ?? report.agentKey,
          agentType: agent?.agentType ?? SUPERVISOR_AGENT_TYPE,
          condition: 'fatal',
          severity: 'critical',
          summary: `${report.agentKey} (program ${report.program}) is fatal after ${report.restarts} restarts (${exit}); supervisor ${supervisorId} will not start it again`,
          evidence: { supervisorId, report: report as unknown as JsonObject },
          source: 'supervisor',
        });
      };
      for (const report of reports) {
        raiseFatal(report).catch((err: unknown) =>
          ctx.logger.error(
            { err, supervisorId, agentKey: report.agentKey },
            'a fatal report could not be raised',
          ),
        );
      }
    },
  };
}
