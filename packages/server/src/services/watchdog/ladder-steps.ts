/**
 * The recovery ladder's writes to an open intervention — a step noted (evidence, the command sent),
 * held or resumed, ended — each published as an `intervention` event (and ended ones logged).
 */
import type { Intervention, JsonObject } from '@rouse/protocol';
import type { Logger } from 'pino';
import type { Store } from '../../store/store.js';
import type { Interventions } from './interventions.js';

export interface LadderSteps {
  note(i: Intervention, evidence: JsonObject, commandId?: string): Promise<void>;
  hold(i: Intervention, held: boolean): Promise<void>;
  end(i: Intervention, state: 'succeeded' | 'failed' | 'skipped', reason: string): Promise<void>;
}

export function createLadderSteps(deps: {
  store: Store;
  interventions: Interventions;
  logger: Logger;
}): LadderSteps {
  const { store, logger } = deps;
  async function note(i: Intervention, evidence: JsonObject, commandId?: string): Promise<void> {
    const noted = await store.noteIntervention({
      id: i.id,
      evidence,
      ...(commandId === undefined ? {} : { commandId }),
    });
    if (noted) deps.interventions.publish(noted);
  }

  async function hold(i: Intervention, held: boolean): Promise<void> {
    const changed = await store.holdIntervention({ id: i.id, held });
    if (changed) deps.interventions.publish(changed);
  }

  async function end(
    i: Intervention,
    state: 'succeeded' | 'failed' | 'skipped',
    reason: string,
  ): Promise<void> {
    const ended = await store.endIntervention({ id: i.id, state, reason });
    if (ended === null) return;
    deps.interventions.publish(ended);
    logger.info(
      { agentId: i.agentId, intervention: i.id, action: i.action, state, reason },
      'recovery rung ended',
    );
  }

  return { note, hold, end };
}
