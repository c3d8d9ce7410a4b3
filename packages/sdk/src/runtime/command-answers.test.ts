/**
 * Command answers: sent at once on a call of their own, several together when they arrive while a
 * call is in flight, given back for the heartbeat when a call fails, within a byte budget a request,
 * and left to heartbeats alone for a coordinator that has no such route (404).
 */
import type { CommandAck } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { RouseApiError } from '../errors.js';
import { acksFor, CommandAnswers, MAX_QUEUED_ANSWERS } from './command-answers.js';

const ack = (n: number, output?: string): CommandAck => ({
  commandId: `cmd_${n}`,
  outcome: 'done',
  ...(output === undefined ? {} : { output }),
});

/** A send that is answered by hand: each call waits until the test settles it. */
function harness(maxBytes = 60_000) {
  const calls: { acks: string[]; settle: (ok: boolean | Error) => void }[] = [];
  const delivered: string[][] = [];
  let fallBacks = 0;
  let registered = true;
  const answers = new CommandAnswers({
    send: (acks) => {
      if (!registered) return null;
      return new Promise<void>((resolve, reject) => {
        calls.push({
          acks: acks.map((a) => a.commandId),
          settle: (ok) => (ok === true ? resolve() : reject(ok === false ? new Error('refused') : ok)),
        });
      });
    },
    delivered: (acks) => delivered.push(acks.map((a) => a.commandId)),
    fallBack: () => fallBacks++,
    maxBytes,
  });
  const settled = () => new Promise((r) => setImmediate(r));
  return {
    answers,
    calls,
    delivered,
    settled,
    fallBacks: () => fallBacks,
    unregister: () => {
      registered = false;
    },
  };
}

describe('CommandAnswers', () => {
  it('sends an answer at once, and those queued meanwhile together with the next call', async () => {
    const h = harness();
    h.answers.add(ack(1));
    expect(h.calls.map((c) => c.acks)).toEqual([['cmd_1']]);
    h.answers.add(ack(2));
    h.answers.add(ack(3));
    expect(h.calls).toHaveLength(1); // one call in flight at a time
    h.calls[0]?.settle(true);
    await h.settled();
    expect(h.calls.map((c) => c.acks)).toEqual([['cmd_1'], ['cmd_2', 'cmd_3']]);
    h.calls[1]?.settle(true);
    await h.settled();
    expect(h.delivered).toEqual([['cmd_1'], ['cmd_2', 'cmd_3']]);
    expect(h.answers.length).toBe(0);
    expect(h.fallBacks()).toBe(0);
  });

  it('an answer queued after the last look at the queue still goes at once', async () => {
    // After a call resolves, the sending looks at the queue, finds it empty and ends a few
    // microtasks later: an answer can come in between. Each delay below lands elsewhere in that span.
    for (let ticks = 0; ticks <= 6; ticks++) {
      const h = harness();
      h.answers.add(ack(1));
      h.calls[0]?.settle(true);
      for (let t = 0; t < ticks; t++) await Promise.resolve();
      h.answers.add(ack(2));
      await h.settled();
      expect(h.calls.map((c) => c.acks)).toEqual([['cmd_1'], ['cmd_2']]);
    }
  });

  it('a failed call gives its answers back for the heartbeat, asks for one, and does not retry by itself', async () => {
    const h = harness();
    h.answers.add(ack(1));
    h.answers.add(ack(2));
    h.calls[0]?.settle(false);
    await h.settled();
    expect(h.fallBacks()).toBe(1);
    expect(h.calls).toHaveLength(1);
    // The heartbeat takes them, oldest first.
    expect(h.answers.take().map((a) => a.commandId)).toEqual(['cmd_1', 'cmd_2']);
    // Not registered yet: nothing is sent, and the heartbeat is asked for.
    h.unregister();
    h.answers.add(ack(3));
    await h.settled();
    expect(h.fallBacks()).toBe(2);
    expect(h.answers.length).toBe(1);
  });

  it('a request carries at most its byte budget (always one), the rest the next', async () => {
    const big = 'x'.repeat(5000);
    const h = harness(12_000);
    for (const n of [1, 2, 3, 4]) h.answers.giveBack([ack(5 - n, big)]);
    expect(h.answers.take().map((a) => a.commandId)).toEqual(['cmd_1', 'cmd_2']);
    expect(h.answers.take().map((a) => a.commandId)).toEqual(['cmd_3', 'cmd_4']);
    const tiny = harness(10);
    tiny.answers.giveBack([ack(1, big)]);
    expect(tiny.answers.take()).toHaveLength(1);
  });

  it('stop waits for the call in flight and sends nothing more on its own', async () => {
    const h = harness();
    h.answers.add(ack(1));
    const stopped = h.answers.stop();
    h.answers.add(ack(2));
    h.calls[0]?.settle(true);
    await stopped;
    expect(h.calls).toHaveLength(1);
    expect(h.answers.take().map((a) => a.commandId)).toEqual(['cmd_2']);
  });

  it('a coordinator without the route (404): heartbeats carry every answer from then on', async () => {
    const h = harness();
    h.answers.add(ack(1));
    h.calls[0]?.settle(new RouseApiError(404, 'not_found', 'no route'));
    await h.settled();
    expect(h.fallBacks()).toBe(1);
    h.answers.add(ack(2));
    await h.settled();
    expect(h.calls).toHaveLength(1);
    expect(h.answers.take().map((a) => a.commandId)).toEqual(['cmd_1', 'cmd_2']);
  });

  it('without a call of their own, answers wait for the heartbeat', () => {
    const plain = new CommandAnswers();
    plain.add(ack(1), ack(2));
    expect(plain.take().map((a) => a.commandId)).toEqual(['cmd_1', 'cmd_2']);
  });

  it('a request carries at most 100 answers, and the queue keeps the newest when it overflows', () => {
    const plain = new CommandAnswers();
    for (let n = 1; n <= MAX_QUEUED_ANSWERS + 5; n++) plain.add(ack(n));
    expect(plain.length).toBe(MAX_QUEUED_ANSWERS);
    const first = plain.take();
    expect(first).toHaveLength(100);
    expect(first[0]?.commandId).toBe('cmd_6');
  });
});

describe('acksFor', () => {
  it('answers the handled types done and any other unsupported, skipping those answered later and those without an id', () => {
    expect(
      acksFor(
        [
          { id: 'c1', type: 'wake' },
          { id: 'c2', type: 'restart' },
          { type: 'wake' },
          { id: 'c3', type: 'checkpoint' },
        ],
        ['wake'],
        ['checkpoint'],
      ),
    ).toEqual([
      { commandId: 'c1', outcome: 'done' },
      { commandId: 'c2', outcome: 'unsupported', message: 'this agent does not act on restart' },
    ]);
  });
});
