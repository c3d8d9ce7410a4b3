/** The SQLite InterventionStore (see `intervention-store.ts`). */
import type { Intervention, JsonObject } from '@rouse/protocol';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { type InterventionRow, toIntervention } from '../intervention-row.js';
import type {
  EndInterventionInput,
  InterventionQuery,
  NoteInterventionInput,
  OpenInterventionInput,
} from '../store.js';
import type { SqliteContext } from './sqlite-context.js';

type RawRow = Omit<InterventionRow, 'evidence'> & { evidence: string };

const toWire = (raw: RawRow | undefined): Intervention | null =>
  raw === undefined ? null : toIntervention({ ...raw, evidence: JSON.parse(raw.evidence) as JsonObject });

export function openIntervention(ctx: SqliteContext, input: OpenInterventionInput): Intervention | null {
  return toWire(
    ctx.interventions.openIntervention.get({
      id: input.id,
      agentId: input.agentId,
      incarnation: input.incarnation,
      taskId: input.taskId ?? '',
      condition: input.condition,
      action: input.action,
      rung: input.rung,
      attempt: input.attempt,
      state: input.held ? 'held' : 'pending',
      reason: input.reason,
      evidence: JSON.stringify(input.evidence),
      actor: input.actor,
      commandId: input.commandId ?? null,
      coordinatorId: input.coordinatorId,
      shardEpoch: input.shardEpoch,
      now: ctx.clock.now(),
    }) as RawRow | undefined,
  );
}

export function endIntervention(ctx: SqliteContext, input: EndInterventionInput): Intervention | null {
  return toWire(
    ctx.interventions.endIntervention.get({
      id: input.id,
      state: input.state,
      reason: input.reason,
      evidence: JSON.stringify(input.evidence ?? {}),
      now: ctx.clock.now(),
    }) as RawRow | undefined,
  );
}

export function holdIntervention(
  ctx: SqliteContext,
  input: { id: string; held: boolean },
): Intervention | null {
  return toWire(
    ctx.interventions.holdIntervention.get({ id: input.id, state: input.held ? 'held' : 'pending' }) as
      | RawRow
      | undefined,
  );
}

/** Read and written in one synchronous write (nothing else runs in between). */
export function noteIntervention(ctx: SqliteContext, input: NoteInterventionInput): Intervention | null {
  const current = getIntervention(ctx, input.id);
  if (current === null || (current.state !== 'pending' && current.state !== 'held')) return null;
  return toWire(
    ctx.interventions.noteIntervention.get({
      id: input.id,
      evidence: JSON.stringify({ ...current.evidence, ...input.evidence }),
      commandId: input.commandId ?? null,
    }) as RawRow | undefined,
  );
}

export function getIntervention(ctx: SqliteContext, id: string): Intervention | null {
  return toWire(ctx.interventions.selectIntervention.get({ id }) as RawRow | undefined);
}

export function listInterventions(
  ctx: SqliteContext,
  query: InterventionQuery = {},
): { interventions: Intervention[]; nextCursor: string | null } {
  const limit = query.limit ?? Number.MAX_SAFE_INTEGER;
  const raws = ctx.interventions.listInterventions.all({
    beforeSeq: query.cursor ? decodeCursor(query.cursor) : Number.MAX_SAFE_INTEGER,
    agentId: query.agentId ?? null,
    taskId: query.taskId ?? null,
    commandId: query.commandId ?? null,
    states: query.states === undefined ? null : JSON.stringify(query.states),
    limit: limit + 1,
  }) as RawRow[];
  const page = raws.slice(0, limit);
  const last = page.at(-1);
  return {
    interventions: page.map((r) => toWire(r) as Intervention),
    nextCursor: raws.length > limit && last !== undefined ? encodeCursor(last.seq) : null,
  };
}
