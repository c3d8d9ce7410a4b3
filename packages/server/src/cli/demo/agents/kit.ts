/**
 * What the watchdog act's agent programs share (`rouse demo --act watchdog`): each is an SDK monitor
 * run by `rouse supervise`, which gives it its coordinator, token, key, type and supervisor in the
 * environment. Each tells the demo what it does as one JSON line per event appended to
 * `ROUSE_DEMO_EVENTS` (its stdout belongs to its supervisor).
 */
import { appendFileSync } from 'node:fs';
import type { JsonObject } from '@rouse/protocol';
import { type Monitor, monitor } from '@rouse/sdk';

const env = (name: string): string => {
  const v = process.env[name];
  if (v === undefined || v === '')
    throw new Error(`${name} is not set (run it under rouse demo --act watchdog)`);
  return v;
};

/** The agent's short name: the last part of its key (`demo-host/staller-1` → `staller-1`). */
export const agentName = (): string =>
  (process.env.ROUSE_AGENT_KEY ?? `pid-${process.pid}`).split('/').pop() as string;

/** Tell the demo what just happened. */
export function tell(event: string, fields: JsonObject = {}): void {
  appendFileSync(
    env('ROUSE_DEMO_EVENTS'),
    `${JSON.stringify({ event, agent: agentName(), pid: process.pid, ...fields })}\n`,
  );
}

/** Register a monitor whose snapshot (when the watchdog asks for one) is `state()`. */
export async function startAgent(state: () => JsonObject): Promise<Monitor> {
  const m = monitor({
    url: env('ROUSE_URL'),
    token: env('ROUSE_AGENT_TOKEN'),
    agentType: env('ROUSE_AGENT_TYPE'),
    name: agentName(),
    shutdownSignals: ['SIGTERM', 'SIGINT'],
    snapshot: state,
  });
  // The supervisor sends SIGUSR1 with a wake (`wake_signal`); without a listener Node would open its inspector.
  process.on('SIGUSR1', () => tell('sigusr1'));
  await m.start();
  return m;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Run `step` every `everyMs` until the monitor stops, then leave and exit. */
export async function loop(m: Monitor, everyMs: number, step: () => Promise<void>): Promise<never> {
  while (!m.signal.aborted) {
    await sleep(everyMs);
    if (m.signal.aborted) break;
    await step();
  }
  await m.stop();
  process.exit(0);
}
