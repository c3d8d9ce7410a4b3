/**
 * The browser streams' pacing, on fake timers: a lone change is sent within 250 ms; a steady flow
 * widens the window to 2 s (a page refetches at most every two seconds); a quiet spell brings it back
 * to 250 ms; every stream is flushed by the same timer; a page that comes back gets what it missed
 * from the kept frames, or `resync` once they are gone.
 */
import type { StreamEvent } from '@rouse/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SseStream } from '../sse.js';
import { BrowserStreams, LINGER_MS } from './stream.js';

interface Frame {
  at: number;
  event: string;
  data: string;
  id: string;
}

function setup() {
  let listener: (e: StreamEvent) => void = () => {};
  const subscriptions = { active: 0, everyCoordinator: 0 };
  const streams = new BrowserStreams(
    {
      subscribe: (l, options) => {
        listener = l;
        subscriptions.active++;
        if (options?.everyCoordinator) subscriptions.everyCoordinator++;
        return () => {
          listener = () => {};
          subscriptions.active--;
          if (options?.everyCoordinator) subscriptions.everyCoordinator--;
        };
      },
    },
    {
      open: () => {
        const abort = new AbortController();
        const frames: Frame[] = [];
        const stream: SseStream = {
          signal: abort.signal,
          closed: false,
          send: (event, data, id) => {
            frames.push({ at: performance.now(), event, data, id: String(id) });
            return true;
          },
          comment: () => true,
          close: () => abort.abort(),
          writable: () => Promise.resolve(),
        };
        opened.push({ frames, close: () => abort.abort() });
        return stream;
      },
    },
  );
  const opened: { frames: Frame[]; close: () => void }[] = [];
  const open = (lastEventId = '') => {
    streams.serve(
      { headers: lastEventId === '' ? {} : { 'last-event-id': lastEventId }, query: {} } as FastifyRequest,
      {} as FastifyReply,
    );
    return opened.at(-1)!;
  };
  let n = 0;
  const change = () =>
    listener({ type: 'task.progress', at: 0, taskId: `tsk_${++n}`, progress: null, phase: null });
  return { streams, open, change, emit: (e: StreamEvent) => listener(e), subscriptions };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('BrowserStreams pacing', () => {
  it('a lone change goes out within 250 ms, to every open stream at once, naming its ids', async () => {
    const { open, change } = setup();
    const a = open();
    const b = open();
    const t0 = performance.now();
    change();
    await vi.advanceTimersByTimeAsync(249);
    expect(a.frames).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(a.frames.map((f) => [f.event, f.at - t0])).toEqual([['changes', 250]]);
    expect(b.frames.map((f) => [f.data, f.at])).toEqual(a.frames.map((f) => [f.data, f.at]));
    expect(JSON.parse(a.frames[0]!.data).tasks).toEqual(['tsk_1']);
  });

  it('a steady flow widens the window to 2 s; after a quiet spell a change goes out within 250 ms again', async () => {
    const { open, change } = setup();
    const page = open();
    // A change every 50 ms for 12 s.
    for (let i = 0; i < 240; i++) {
      change();
      await vi.advanceTimersByTimeAsync(50);
    }
    const gaps = page.frames.slice(1).map((f, i) => f.at - page.frames[i]!.at);
    expect(gaps.slice(0, 3)).toEqual([500, 1000, 2000]);
    expect(gaps.slice(3).every((g) => g === 2000)).toBe(true);
    expect(page.frames.length).toBeLessThanOrEqual(9);
    // Every change was named by some frame.
    const named = new Set(page.frames.flatMap((f) => JSON.parse(f.data).tasks as string[]));
    await vi.advanceTimersByTimeAsync(2000);
    for (const f of page.frames) for (const id of JSON.parse(f.data).tasks as string[]) named.add(id);
    expect(named.size).toBe(240);
    // Quiet for 3 s, then one change: 250 ms.
    await vi.advanceTimersByTimeAsync(3000);
    const before = page.frames.length;
    const t = performance.now();
    change();
    await vi.advanceTimersByTimeAsync(250);
    expect(page.frames.length).toBe(before + 1);
    expect(page.frames.at(-1)!.at - t).toBe(250);
  });

  it('after a window with more ids than a frame names (a burst), the next one is 2 s at once', async () => {
    const { open, change } = setup();
    const page = open();
    // 20 changes every 10 ms: 500 in the first 250 ms, then the flow goes on for 5 s.
    for (let i = 0; i < 500; i++) {
      for (let k = 0; k < 20; k++) change();
      await vi.advanceTimersByTimeAsync(10);
    }
    const gaps = page.frames.slice(1).map((f, i) => f.at - page.frames[i]!.at);
    expect(JSON.parse(page.frames[0]!.data).more).toBe(true);
    expect(gaps.slice(0, 2)).toEqual([2000, 2000]);
  });

  it('a page that comes back gets what it missed in one frame, or resync once those frames are gone', async () => {
    const { open, change } = setup();
    const first = open();
    change();
    await vi.advanceTimersByTimeAsync(250);
    const seen = first.frames.at(-1)!.id;
    first.close();
    change();
    change();
    await vi.advanceTimersByTimeAsync(2000);
    // Missed while away, in a window closed meanwhile: replayed at once, with the id of its end.
    change(); // in the open window: it comes with everyone's next frame, not in the replay
    const back = open(seen);
    expect(back.frames.map((f) => [f.event, JSON.parse(f.data).tasks, f.id.split('-')[1]])).toEqual([
      ['changes', ['tsk_2', 'tsk_3'], '3'],
    ]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(back.frames.map((f) => [f.event, JSON.parse(f.data).tasks])).toEqual([
      ['changes', ['tsk_2', 'tsk_3']],
      ['changes', ['tsk_4']],
    ]);
    // Nothing missed: nothing sent.
    expect(open(back.frames.at(-1)!.id).frames).toEqual([]);
    // Many windows missed: one frame, ids cut at 100 and marked `more`, the counts summed.
    const lastSeen = back.frames.at(-1)!.id;
    back.close();
    for (let w = 0; w < 20; w++) {
      for (let i = 0; i < 10; i++) change();
      await vi.advanceTimersByTimeAsync(2000);
    }
    const caughtUp = open(lastSeen).frames;
    expect(caughtUp.map((f) => [f.event, JSON.parse(f.data).tasks.length, JSON.parse(f.data).more])).toEqual([
      ['changes', 100, true],
    ]);
    expect(JSON.parse(caughtUp[0]!.data).tasks[0]).toBe('tsk_5');
    // The frames of the last minute are kept: after one more minute of changes, the old id resyncs.
    const watching = open();
    for (let w = 0; w < 31; w++) {
      change();
      await vi.advanceTimersByTimeAsync(2000);
    }
    expect(open(lastSeen).frames.map((f) => f.event)).toEqual(['resync']);
    // A page that saw a frame of the last minute still catches up.
    expect(watching.frames.length).toBeGreaterThan(20);
    expect(open(watching.frames[10]!.id).frames.map((f) => f.event)).toEqual(['changes']);
    expect(open('someone-else-1').frames.map((f) => f.event)).toEqual(['resync']);
    expect(open(`${lastSeen.split('-')[0]}-99999`).frames.map((f) => f.event)).toEqual(['resync']);
  });

  it('counts interventions and alerts, and names the agents a transition or an intervention touched', async () => {
    const { open, emit } = setup();
    const page = open();
    emit({ type: 'alert', at: 0, alert: {} } as unknown as StreamEvent);
    emit({
      type: 'intervention',
      at: 0,
      intervention: { agentId: 'agt_1', taskId: 'tsk_9' },
    } as unknown as StreamEvent);
    emit({
      type: 'task.transition',
      at: 0,
      task: { id: 'tsk_8', agentId: 'agt_2' },
    } as unknown as StreamEvent);
    await vi.advanceTimersByTimeAsync(250);
    expect(page.frames.map((f) => JSON.parse(f.data))).toEqual([
      { tasks: ['tsk_9', 'tsk_8'], agents: ['agt_1', 'agt_2'], interventions: 1, alerts: 1 },
    ]);
  });

  it("listens to every coordinator's events only while a page is open, and a while after the last one left", async () => {
    const { streams, open, change, subscriptions } = setup();
    // No page: nothing listened to (a PostgreSQL coordinator with such a listener makes the others relay all they do).
    expect(subscriptions).toEqual({ active: 0, everyCoordinator: 0 });
    expect(streams.seq).toBeNaN();
    const a = open();
    const b = open();
    expect(subscriptions).toEqual({ active: 1, everyCoordinator: 1 });
    change();
    expect(streams.seq).toBe(1);
    a.close();
    b.close();
    // A page that reconnects within the linger still gets replay.
    await vi.advanceTimersByTimeAsync(LINGER_MS - 1);
    expect(subscriptions.active).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(subscriptions).toEqual({ active: 0, everyCoordinator: 0 });
    expect(streams.seq).toBeNaN();
    // Back after a gap: what happened meanwhile was not seen, so the page starts over.
    change();
    expect(open('any-1').frames.map((f) => f.event)).toEqual(['resync']);
    expect(subscriptions.active).toBe(1);
    streams.close();
    expect(subscriptions.active).toBe(0);
  });
});
