/**
 * One heartbeat exchange: what was queued rides on the first part and comes back when it fails, a
 * refused token stops the agent instead of counting as a lost connection, and the commands an answer
 * delivers are handed over, then answered.
 */
import type { AgentCommand, AgentHeartbeatRequest, AgentHeartbeatResponse } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import type { Client } from '../client.js';
import { RouseApiError, RouseNetworkError } from '../errors.js';
import { noopLogger } from '../logger.js';
import { HeartbeatExchange } from './heartbeat-exchange.js';

/** A client whose heartbeat answers come from `answer` (throw to fail), recording what was sent. */
function harness(answer: (req: AgentHeartbeatRequest, n: number) => AgentHeartbeatResponse) {
  const sent: AgentHeartbeatRequest[] = [];
  const ackCalls: unknown[] = [];
  const seen: string[] = [];
  const client = {
    agentHeartbeat: async (_id: string, req: AgentHeartbeatRequest) => {
      sent.push(structuredClone(req));
      return answer(req, sent.length);
    },
    acknowledgeCommands: async (_id: string, body: unknown) => {
      ackCalls.push(body);
      return { acknowledged: 1 };
    },
  } as unknown as Client;
  const exchange = new HeartbeatExchange({
    agent: () => ({ client, agentId: 'agt_1' }),
    timeoutMs: () => 1000,
    actsOn: ['wake'],
    logger: noopLogger,
    beatSoon: () => seen.push('beatSoon'),
    failed: () => seen.push('failed'),
    error: () => seen.push('error'),
    refused: () => seen.push('refused'),
    answered: (part) => seen.push(`answered ${part.status ?? ''}`),
    command: (c: AgentCommand) => seen.push(`command ${c.type}`),
  });
  return { exchange, sent, ackCalls, seen };
}

const ok = (commands: AgentCommand[] = []): AgentHeartbeatResponse =>
  ({ heartbeatIntervalMs: 5000, commands }) as unknown as AgentHeartbeatResponse;

describe('HeartbeatExchange', () => {
  it('carries what was queued on the first part, hands over the commands, then answers them', async () => {
    const h = harness((_req, n) =>
      n === 1
        ? ok([
            { id: 'c1', type: 'wake' },
            { id: 'c2', type: 'restart' },
          ])
        : ok(),
    );
    h.exchange.dependencies.observe('openai', 'down');
    h.exchange.answers.giveBack([{ commandId: 'c0', outcome: 'done' }]);
    const parts = (r: AgentHeartbeatRequest) => [r, { status: 'running' } as AgentHeartbeatRequest];
    expect(await h.exchange.send({ status: 'idle' } as AgentHeartbeatRequest, parts)).toBe(true);
    expect(h.sent[0]?.dependencies?.map((d) => d.name)).toEqual(['openai']);
    expect(h.sent[0]?.acks).toEqual([{ commandId: 'c0', outcome: 'done' }]);
    expect(h.sent[1]?.acks).toBeUndefined();
    expect(h.seen).toEqual(['answered idle', 'command wake', 'command restart', 'answered running']);
    // The answers to c1 and c2 went at once on their own call.
    expect(h.ackCalls).toEqual([
      {
        acks: [
          { commandId: 'c1', outcome: 'done' },
          { commandId: 'c2', outcome: 'unsupported', message: 'this agent does not act on restart' },
        ],
      },
    ]);
    expect(h.exchange.stats.current.sent).toBe(1);
    expect(h.exchange.dependencies.pending).toBe(false);
  });

  it('a failed beat gives back what it carried and reports the failure', async () => {
    const h = harness(() => {
      throw new RouseNetworkError('connection refused');
    });
    h.exchange.dependencies.observe('openai', 'down');
    h.exchange.answers.giveBack([{ commandId: 'c0', outcome: 'done' }]);
    expect(await h.exchange.send({ status: 'idle' } as AgentHeartbeatRequest)).toBe(false);
    expect(h.seen).toEqual(['error', 'failed']);
    expect(h.exchange.stats.current.failed).toBe(1);
    expect(h.exchange.dependencies.pending).toBe(true);
    expect(h.exchange.answers.take()).toEqual([{ commandId: 'c0', outcome: 'done' }]);
  });

  it('a refused token stops the agent, not counted as a lost connection', async () => {
    const h = harness(() => {
      throw new RouseApiError(401, 'unauthorized', 'token refused');
    });
    expect(await h.exchange.send({ status: 'idle' } as AgentHeartbeatRequest)).toBe(false);
    expect(h.seen).toEqual(['error', 'refused']);
  });
});
