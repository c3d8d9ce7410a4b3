/**
 * What the watchdog demo tells as it happens: the agent programs' own events (tailed from the file
 * they append to), the supervisor's lines, the alerts the demo's webhook receives, and the closing
 * tables of interventions and alerts.
 */
import { open } from 'node:fs/promises';
import type { Alert, Intervention, JsonObject } from '@rouse/protocol';
import { renderTable } from '../format/table.js';
import type { DemoBook } from './book.js';
import type { AlertDelivery } from './watchdog-receiver.js';

/** One line an agent program appended to the events file. */
export interface AgentEvent extends JsonObject {
  event: string;
  agent: string;
  pid: number;
}

/** Read the lines appended to `file`, every 200 ms, until the returned function is called. */
export function tailAgentEvents(file: string, onEvent: (e: AgentEvent) => void): () => void {
  let offset = 0;
  let rest = '';
  let busy = false;
  const read = async () => {
    if (busy) return;
    busy = true;
    try {
      const fh = await open(file, 'r');
      try {
        const buf = Buffer.alloc(64 * 1024);
        for (;;) {
          const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
          if (bytesRead === 0) break;
          offset += bytesRead;
          rest += buf.subarray(0, bytesRead).toString('utf8');
        }
      } finally {
        await fh.close();
      }
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        try {
          onEvent(JSON.parse(line) as AgentEvent);
        } catch {
          // not one of ours
        }
      }
    } catch {
      // read again next time
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void read(), 200);
  return () => {
    clearInterval(timer);
    void read();
  };
}

export function tellAgentEvent(book: DemoBook, e: AgentEvent): void {
  const s = book.style;
  const who = s.bold(e.agent);
  switch (e.event) {
    case 'stuck':
      book.say(s.dim('…'), `${who} is stuck at step ${e.step}, waiting for something that never comes`);
      return;
    case 'sigusr1':
      book.detail(`${e.agent} got SIGUSR1 from its supervisor`);
      return;
    case 'woken':
      book.say(s.dim('…'), `${who} woke at its safe point and goes on from step ${e.step}`);
      return;
    case 'freezing':
      book.say(s.dim('…'), `${who} freezes at step ${e.step} (SIGSTOP): no heartbeat, no answer`);
      return;
    case 'resumed':
      book.say(
        s.green('⟳'),
        `${who} restarted from its snapshot (step ${e.step}), incarnation ${e.incarnation}`,
      );
      return;
    case 'leaking':
      book.say(s.dim('…'), `${who} starts keeping every response it fetches (8 MiB a step, never freed)`);
      return;
    case 'rate_limited':
      book.say(s.dim('…'), `${who} gets 429 from llm-api (Retry-After ${e.retryAfter} s) and waits`);
      return;
    case 'recovered':
      book.say(s.dim('…'), `${who}: llm-api answers again; it goes on from step ${e.step}`);
      return;
    default:
      return;
  }
}

/** The supervisor's JSON events worth a line: commands it carries out, exits and restarts of its children. */
export function tellSupervisorLine(book: DemoBook, line: string): void {
  let e: {
    event?: string;
    key?: string;
    type?: string;
    pid?: number;
    signal?: string | null;
    code?: number | null;
    expected?: boolean;
    outcome?: string;
  };
  try {
    e = JSON.parse(line) as typeof e;
  } catch {
    return;
  }
  const who = (e.key ?? '').split('/').pop();
  switch (e.event) {
    case 'command':
      if (e.type !== 'wake') book.detail(`supervisor: ${e.type} for ${who}`);
      return;
    case 'exited':
      book.detail(
        `supervisor: ${who} (pid ${e.pid}) ${e.signal ? `killed by ${e.signal}` : `exited with code ${e.code}`}`,
      );
      return;
    default:
      return;
  }
}

export function tellDelivery(book: DemoBook, d: AlertDelivery): void {
  const s = book.style;
  const tag = d.kind === 'resolved' ? 'RESOLVED' : d.alert.severity.toUpperCase();
  const agents = d.alert.agentIds.map((id) => book.agent(id)).join(', ');
  book.say(
    s.cyan('✉'),
    `alert delivered: [${tag}] ${d.alert.group.condition} on ${d.alert.group.agentType} (${agents}) — ${d.kind}, to the demo's webhook`,
  );
}

export function printInterventions(book: DemoBook, list: Intervention[]): void {
  book.heading('Interventions — rouse interventions');
  if (list.length === 0) {
    book.print('  none');
    return;
  }
  const lines = renderTable(list, [
    { header: 'AGENT', value: (i) => book.agent(i.agentId) },
    { header: 'INC', value: (i) => String(i.incarnation), right: true },
    { header: 'CONDITION', value: (i) => i.condition },
    { header: 'ACTION', value: (i) => i.action },
    { header: 'RUNG', value: (i) => (i.rung === null ? '-' : String(i.rung + 1)), right: true },
    { header: 'ATTEMPT', value: (i) => (i.rung === null ? '-' : String(i.attempt)), right: true },
    { header: 'STATE', value: (i) => book.style.status(stateText(i)) },
    { header: 'WHY', value: (i) => i.reason, maxWidth: 70 },
  ]);
  for (const line of lines) book.print(`  ${line}`);
}

function stateText(i: Intervention): string {
  return i.evidence.heldFor !== undefined && i.state !== 'held' ? `${i.state} (was held)` : i.state;
}

export function printAlerts(book: DemoBook, alerts: Alert[], deliveries: AlertDelivery[]): void {
  book.heading('Alerts — rouse alerts');
  if (alerts.length === 0) {
    book.print('  none');
    return;
  }
  const lines = renderTable(alerts, [
    { header: 'CONDITION', value: (a) => a.group.condition },
    { header: 'AGENT TYPE', value: (a) => a.group.agentType },
    { header: 'SEVERITY', value: (a) => a.severity },
    { header: 'STATE', value: (a) => a.state },
    { header: 'AGENTS', value: (a) => a.agentIds.map((id) => book.agent(id)).join(', ') },
    {
      header: 'DELIVERED',
      value: (a) =>
        deliveries
          .filter((d) => d.alert.id === a.id)
          .map((d) => d.kind)
          .join(', ') || '-',
    },
  ]);
  for (const line of lines) book.print(`  ${line}`);
  book.print('');
  book.print(
    `  ${deliveries.length} notification(s) reached the demo's webhook. Every step above is in the store: rouse interventions, rouse alerts.`,
  );
}
