/** The PostgreSQL InterventionStore (see `intervention-store.ts`): each operation one statement. */
import type { Intervention } from '@rouse/protocol';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { type InterventionRow, toIntervention } from '../intervention-row.js';
import type {
  EndInterventionInput,
  InterventionQuery,
  NoteInterventionInput,
  OpenInterventionInput,
} from '../store.js';
import { INTERVENTION_SQL } from './intervention-statements.js';
import type { PgContext } from './postgres-context.js';
import { pgJson } from './row-mapping.js';

const first = (rows: InterventionRow[]): Intervention | null => (rows[0] ? toIntervention(rows[0]) : null);

export async function openIntervention(
  ctx: PgContext,
  input: OpenInterventionInput,
): Promise<Intervention | null> {
  return first(
    await ctx.rows<InterventionRow>('openIntervention', INTERVENTION_SQL.openIntervention, [
      ctx.now(),
      input.id,
      input.agentId,
      input.incarnation,
      input.taskId ?? '',
      input.condition,
      input.action,
      input.rung,
      input.attempt,
      input.held ? 'held' : 'pending',
      input.reason,
      pgJson(input.evidence),
      input.actor,
      input.coordinatorId,
      input.shardEpoch,
      input.commandId ?? null,
    ]),
  );
}

export async function endIntervention(
  ctx: PgContext,
  input: EndInterventionInput,
): Promise<Intervention | null> {
  return first(
    await ctx.rows<InterventionRow>('endIntervention', INTERVENTION_SQL.endIntervention, [
      ctx.now(),
      input.id,
      input.state,
      input.reason,
      pgJson(input.evidence ?? {}),
    ]),
  );
}

export async function holdIntervention(
  ctx: PgContext,
  input: { id: string; held: boolean },
): Promise<Intervention | null> {
  return first(
    await ctx.rows<InterventionRow>('holdIntervention', INTERVENTION_SQL.holdIntervention, [
      input.id,
      input.held ? 'held' : 'pending',
    ]),
  );
}

export async function noteIntervention(
  ctx: PgContext,
  input: NoteInterventionInput,
): Promise<Intervention | null> {
  return first(
    await ctx.rows<InterventionRow>('noteIntervention', INTERVENTION_SQL.noteIntervention, [
      input.id,
      pgJson(input.evidence),
      input.commandId ?? null,
    ]),
  );
}

export async function getIntervention(ctx: PgContext, id: string): Promise<Intervention | null> {
  return first(
    await ctx.rows<InterventionRow>('selectIntervention', INTERVENTION_SQL.selectIntervention, [id]),
  );
}

export async function listInterventions(
  ctx: PgContext,
  query: InterventionQuery = {},
): Promise<{ interventions: Intervention[]; nextCursor: string | null }> {
  const limit = query.limit ?? 1_000_000;
  const rows = await ctx.rows<InterventionRow>('listInterventions', INTERVENTION_SQL.listInterventions, [
    query.cursor ? decodeCursor(query.cursor) : Number.MAX_SAFE_INTEGER,
    limit + 1,
    query.agentId ?? null,
    query.taskId ?? null,
    query.states ?? null,
    query.commandId ?? null,
  ]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    interventions: page.map(toIntervention),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(Number(last.seq)) : null,
  };
}
