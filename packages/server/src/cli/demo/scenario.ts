/** The demo's tasks: who is meant to get which, and which are meant to stay unfinished. */
import type { CreateTaskRequest, TimingInput } from '@rouse/protocol';

export interface DemoTask {
  name: string;
  req: CreateTaskRequest;
  /** The demo ends when every task that is expected to finish is final. */
  expectFinal: boolean;
  /** Print its diagnosis at the end. */
  explain?: boolean;
}

export function demoTiming(heartbeatIntervalMs: number): TimingInput {
  return { heartbeatIntervalMs, claimTimeoutMs: heartbeatIntervalMs * 4 };
}

/** The three tasks the misbehaving agents claim first (in this order: crashy, hangy, lossy). */
export function victimTasks(timing: TimingInput): DemoTask[] {
  return [1, 2, 3].map((n) => ({
    name: `summarize#${n}`,
    req: { type: 'summarize', payload: { doc: `doc-${n}.md`, ms: 1500 }, timing, labels: { demo: 'victim' } },
    expectFinal: true,
  }));
}

export function otherTasks(timing: TimingInput, now: number): DemoTask[] {
  const tasks: DemoTask[] = [];
  for (let n = 4; n <= 15; n++) {
    tasks.push({
      name: `summarize#${n}`,
      req: { type: 'summarize', payload: { doc: `doc-${n}.md`, ms: 2500 + ((n * 733) % 3000) }, timing },
      expectFinal: true,
    });
  }
  tasks.push({
    name: 'summarize#16',
    req: {
      type: 'summarize',
      payload: { doc: 'huge-report.pdf', ms: 15_000 },
      timing,
      labels: { demo: 'cancel-me' },
    },
    expectFinal: true,
  });
  tasks.push(
    { name: 'flaky#1', req: { type: 'flaky', payload: { failures: 2 }, timing }, expectFinal: true },
    { name: 'flaky#2', req: { type: 'flaky', payload: { failures: 1 }, timing }, expectFinal: true },
    {
      name: 'flaky#3',
      req: { type: 'flaky', payload: { mode: 'poison' }, timing },
      expectFinal: true,
      explain: true,
    },
    {
      name: 'flaky#4',
      req: { type: 'flaky', payload: { mode: 'doomed' }, timing, maxAttempts: 3 },
      expectFinal: true,
      explain: true,
    },
    {
      name: 'translate#1',
      req: { type: 'translate', payload: { lang: 'fr' }, timing },
      expectFinal: false,
      explain: true,
    },
    {
      name: 'summarize#17',
      req: { type: 'summarize', payload: { doc: 'weekly.md' }, timing, runAt: now + 10 * 60_000 },
      expectFinal: false,
      explain: true,
    },
  );
  return tasks;
}
