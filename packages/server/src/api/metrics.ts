/**
 * A small in-process metrics registry rendered in the Prometheus text format (version 0.0.4).
 * Counters are fed from the coordinator's event stream and from the API's own hooks; nothing here
 * blocks a request.
 */
import type { StreamEvent } from '@rouse/protocol';

type Labels = Record<string, string>;

interface Family {
  help: string;
  type: 'counter' | 'gauge';
  values: Map<string, number>;
}

export class ApiMetrics {
  private readonly families = new Map<string, Family>();
  /** Label keys of the transition counter, rendered once per target status (hot path). */
  private readonly transitionKeys = new Map<string, string>();
  /** Long-poll claims currently waiting. */
  claimWaiters = 0;
  /** Open SSE streams. */
  sseClients = 0;

  constructor() {
    this.family('rouse_tasks_created_total', 'counter', 'Tasks created.');
    this.family('rouse_task_transitions_total', 'counter', 'Task transitions, by target status.');
    this.family(
      'rouse_http_requests_total',
      'counter',
      'HTTP requests answered, by method, route and status.',
    );
    this.inc('rouse_tasks_created_total', undefined, 0);
  }

  /** Count what the coordinator reports (wired to `coordinator.subscribe`). */
  onEvent(event: StreamEvent): void {
    if (event.type === 'task.created') this.inc('rouse_tasks_created_total');
    else if (event.type === 'task.transition') {
      const to = event.event.to;
      let key = this.transitionKeys.get(to);
      if (key === undefined) {
        key = renderLabels({ to });
        this.transitionKeys.set(to, key);
      }
      const values = this.families.get('rouse_task_transitions_total')!.values;
      values.set(key, (values.get(key) ?? 0) + 1);
    }
  }

  /** A per-route counter of answered requests; label keys are built once per status. */
  requestCounter(method: string, route: string): (status: number) => void {
    const values = this.families.get('rouse_http_requests_total')!.values;
    const keys = new Map<number, string>();
    return (status) => {
      let key = keys.get(status);
      if (key === undefined) {
        key = renderLabels({ method, route, status: String(status) });
        keys.set(status, key);
      }
      values.set(key, (values.get(key) ?? 0) + 1);
    };
  }

  inc(name: string, labels?: Labels, by = 1): void {
    const family = this.families.get(name);
    if (!family) throw new Error(`metric ${name} is not declared`);
    const key = labels ? renderLabels(labels) : '';
    family.values.set(key, (family.values.get(key) ?? 0) + by);
  }

  /** The current value of a counter series (tests and the CLI). */
  value(name: string, labels?: Labels): number {
    return this.families.get(name)?.values.get(labels ? renderLabels(labels) : '') ?? 0;
  }

  /** Render every family in the Prometheus text exposition format. */
  render(): string {
    const out: string[] = [];
    for (const [name, f] of this.families) {
      out.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.type}`);
      for (const [labels, v] of f.values) out.push(`${name}${labels} ${v}`);
    }
    const gauges: [string, string, number][] = [
      ['rouse_claim_waiters', 'Long-poll claim requests waiting for work.', this.claimWaiters],
      ['rouse_sse_clients', 'Open server-sent event streams.', this.sseClients],
      ['process_resident_memory_bytes', 'Resident memory size in bytes.', process.memoryUsage.rss()],
    ];
    for (const [name, help, v] of gauges)
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${v}`);
    return `${out.join('\n')}\n`;
  }

  private family(name: string, type: Family['type'], help: string): void {
    this.families.set(name, { help, type, values: new Map() });
  }
}

function renderLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return `{${parts.join(',')}}`;
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
