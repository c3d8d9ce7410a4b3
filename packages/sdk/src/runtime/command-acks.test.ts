/**
 * Command answers in the SDK: sent at once on a call of their own, several together when they arrive
 * while a call is in flight, kept for the heartbeat when a call fails, and left to heartbeats alone
 * for a coordinator that has no such route (404).
 */
import type { CommandAck } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { RouseApiError } from '../errors.js';
import { CommandAcks } from './command-acks.js';

interface Call {
  acks: CommandAck[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

function harness() {
  const calls: Call[] = [];
  let failures = 0;
  const acks = new CommandAcks(
    ['wake'],
    ['checkpoint'],
    (sent) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ acks: sent, resolve, reject });
      }),
    () => {
      failures++;
    },
  );
  return { acks, calls, failures: () => failures };
}

const settle = () => new Promise((r) => setImmediate(r));
const ids = (list: readonly CommandAck[]) => list.map((a) => a.commandId);

describe('command answers', () => {
  it('are sent at once on a call of their own, those of one delivery together', () => {
    const { acks, calls } = harness();
    acks.delivered([
      { id: 'c1', type: 'wake' },
      { id: 'c2', type: 'restart' },
      { type: 'wake' }, // no id: nothing to answer
      { id: 'c3', type: 'checkpoint' }, // answered when carried out
    ]);
    expect(calls.map((c) => c.acks)).toEqual([
      [
        { commandId: 'c1', outcome: 'done' },
        { commandId: 'c2', outcome: 'unsupported', message: 'this agent does not act on restart' },
      ],
    ]);
    expect(acks.take()).toEqual([]); // nothing left for the heartbeat
  });

  it('queued while a call is in flight go together with the next call', async () => {
    const { acks, calls } = harness();
    acks.delivered([{ id: 'c1', type: 'wake' }]);
    acks.delivered([{ id: 'c2', type: 'wake' }]);
    acks.answer({ commandId: 'c3', outcome: 'done' });
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await settle();
    expect(calls.map((c) => ids(c.acks))).toEqual([['c1'], ['c2', 'c3']]);
    calls[1]!.resolve();
    await settle();
    expect(calls).toHaveLength(2);
  });

  it('a failed call leaves its answers to the heartbeat and asks for one; the next answers try again', async () => {
    const { acks, calls, failures } = harness();
    acks.delivered([{ id: 'c1', type: 'wake' }]);
    calls[0]!.reject(new RouseApiError(503, 'unavailable', 'the store is away'));
    await settle();
    expect(failures()).toBe(1);
    expect(ids(acks.take())).toEqual(['c1']);
    acks.delivered([{ id: 'c2', type: 'wake' }]);
    expect(calls.map((c) => ids(c.acks))).toEqual([['c1'], ['c2']]);
  });

  it('a coordinator without the route (404): heartbeats carry every answer from then on', async () => {
    const { acks, calls } = harness();
    acks.delivered([{ id: 'c1', type: 'wake' }]);
    calls[0]!.reject(new RouseApiError(404, 'not_found', 'no route'));
    await settle();
    acks.delivered([{ id: 'c2', type: 'wake' }]);
    expect(calls).toHaveLength(1);
    expect(ids(acks.take())).toEqual(['c1', 'c2']);
  });

  it('without anyone to send to, answers wait for the heartbeat', () => {
    const acks = new CommandAcks(['wake'], [], () => null);
    acks.delivered([{ id: 'c1', type: 'wake' }]);
    expect(ids(acks.take())).toEqual(['c1']);
    const plain = new CommandAcks(['wake']);
    plain.answer({ commandId: 'c2', outcome: 'done' });
    expect(ids(plain.take())).toEqual(['c2']);
  });
});
