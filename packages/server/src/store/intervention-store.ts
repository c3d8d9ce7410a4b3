/**
 * The interventions part of the Store contract: the steps the watchdog's recovery ladder (or a person)
 * takes on an agent, each recorded with its evidence and who acted. Opening one is a conditional
 * write — at most one open (`pending` or `held`) per agent, condition and task — so two coordinators
 * can never act twice on the same condition at once; its state then moves `pending ⇄ held` and ends
 * `succeeded`, `failed` or `skipped`, once. Part of `Store` (`store.ts`).
 */
import type { Intervention, InterventionState, JsonObject } from '@rouse/protocol';

/** A new intervention: the wire fields it starts with (it opens `pending`, or `held`). */
export type OpenInterventionInput = Omit<Intervention, 'state' | 'startedAt' | 'endedAt' | 'commandId'> & {
  /** The command it sends the agent, if any (see `InterventionQuery.commandId`). */
  commandId?: string | null;
  /** Open it `held` (a dependency outage no action can cure) instead of `pending`. */
  held?: boolean;
};

export interface EndInterventionInput {
  id: string;
  state: 'succeeded' | 'failed' | 'skipped';
  /** Why it ended (replaces the opening reason). */
  reason: string;
  /** Merged into the evidence it opened with. */
  evidence?: JsonObject;
}

export interface NoteInterventionInput {
  id: string;
  evidence: JsonObject;
  commandId?: string;
}

export interface InterventionQuery {
  agentId?: string;
  taskId?: string;
  /** The intervention that sent this command (an acknowledgement names it). */
  commandId?: string;
  states?: InterventionState[];
  limit?: number;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
}

export interface InterventionStore {
  /**
   * Record a new intervention, unless one is open for the same agent, condition and task: then
   * nothing is written and the result is null.
   */
  openIntervention(input: OpenInterventionInput): Promise<Intervention | null>;
  /** End an open intervention; null if it is not open (ended already, or unknown). */
  endIntervention(input: EndInterventionInput): Promise<Intervention | null>;
  /** Move an open intervention between `pending` and `held`; null if it is not open. */
  holdIntervention(input: { id: string; held: boolean }): Promise<Intervention | null>;
  /**
   * Record a step of an open intervention: `evidence` merged into its evidence (top-level keys
   * replaced), and `commandId` — the command it sent last — when given. Null if it is not open.
   */
  noteIntervention(input: NoteInterventionInput): Promise<Intervention | null>;
  getIntervention(id: string): Promise<Intervention | null>;
  /** Newest first, filtered, a page at a time (`nextCursor` null on the last page). */
  listInterventions(
    query?: InterventionQuery,
  ): Promise<{ interventions: Intervention[]; nextCursor: string | null }>;
}
