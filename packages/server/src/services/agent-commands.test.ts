/**
 * Queueing commands (real SQLite, manual clock): a supervised agent's wake goes to its supervisor and
 * to the agent under one id, and an agent its caller has just read is not read again.
 */
import { SUPERVISOR_AGENT_TYPE } from '@rouse/protocol';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type CoordinatorFixture, createFixture, ENROLLMENT } from '../test-support/coordinator-fixture.js';
import { storeCallCounter } from '../test-support/store-call-counter.js';
import { createAgentCommands } from './agent-commands.js';

let f: CoordinatorFixture;
afterEach(async () => {
  await f.close();
});

describe('agent commands', () => {
  it('a wake for a supervised agent reaches both queues, and an agent already read is not read again', async () => {
    f = await createFixture();
    const sup = await f.coordinator.registerAgent(ENROLLMENT, {
      agentType: SUPERVISOR_AGENT_TYPE,
      key: 'host-1',
      exclusive: true,
    });
    const child = await f.coordinator.registerAgent(ENROLLMENT, {
      agentType: 'p',
      key: 'host-1/p-1',
      supervisorId: sup.agent.id,
    });
    const reads = storeCallCounter(['getAgent']);
    const commands = createAgentCommands({
      store: reads.wrap(f.store),
      clock: f.clock,
      logger: pino({ level: 'silent' }),
      pollMs: 250,
    });

    const first = await commands.enqueue(child.agent.id, { type: 'wake', signal: 'SIGUSR1' });
    expect(reads.calls).toBe(2); // the agent, then its supervisor
    reads.reset();
    const known = await f.store.getAgent(child.agent.id);
    const second = await commands.enqueue(
      child.agent.id,
      { type: 'wake', reason: 'again' },
      known ?? undefined,
    );
    expect(reads.calls).toBe(1); // its supervisor only

    const routed = { agentId: child.agent.id, agentKey: 'host-1/p-1' };
    expect(await f.store.takeAgentCommands(sup.agent.id)).toEqual([
      { ...first, ...routed },
      { ...second, ...routed },
    ]);
    expect(await f.store.takeAgentCommands(child.agent.id)).toEqual([first, second]);
  });
});
