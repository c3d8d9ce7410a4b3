/**
 * A small in-process metrics registry rendered in the Prometheus text format (version 0.0.4).
 * Counters are fed from the coordinator's event stream and from the API's own hooks; nothing here
 * blocks a request.
 */
import type { Intervention, StreamEvent } from '@rouse/protocol';

type Labels = Record<string, string>;

interface Family {
  help: string;
  type: 'counter' | 'gauge';
  values: Map<string, number>;
}

/** One labelled series of a histogram: cumulative counts per upper bound, the sum and the count. */
interface HistogramSeries {
  counts: number[];
  sum: number;
  count: number;
}

interface HistogramFamily {
  help: string;
  bounds: readonly number[];
  /** By rendered label set ('' = none). */
  series: Map<string, HistogramSeries>;
}

/** Seconds, from 100 µs to 10 s: request handling and detector runs. */
export const LATENCY_BUCKETS_S = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
] as const;

/** Seconds, from 10 ms to an hour: recovery steps and task durations. */
export const DURATION_BUCKETS_S = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
] as const;

const ENDED_INTERVENTION = new Set(['succeeded', 'failed', 'skipped']);
/** Acknowledgements already timed (intervention id and command), bounded. */
const MAX_TIMED_ACKS = 10_000;

/** Series read when the metrics are rendered (the agents by status, from the store). */
export type GaugeSource = () => Promise<
  { name: string; help: string; type: 'gauge' | 'counter'; series: [Labels, number][] }[]
>;

export class ApiMetrics {
  private readonly families = new Map<string, Family>();
  private readonly histograms = new Map<string, HistogramFamily>();
  private readonly gaugeSources: GaugeSource[] = [];
  /** Label keys of the transition counter, rendered once per target status (hot path). */
  private readonly transitionKeys = new Map<string, string>();
  /** Label keys of the task duration histogram, rendered once per task type (hot path). */
  private readonly durationKeys = new Map<string, string>();
  /** Long-poll claims currently waiting. */
  claimWaiters = 0;
  /** Open SSE streams. */
  sseClients = 0;
  private readonly timedAcks = new Set<string>();

  constructor() {
    this.family('rouse_tasks_created_total', 'counter', 'Tasks created.');
    this.family('rouse_task_transitions_total', 'counter', 'Task transitions, by target status.');
    this.family(
      'rouse_http_requests_total',
      'counter',
      'HTTP requests answered, by method, route and status.',
    );
    this.family('rouse_agent_heartbeats_total', 'counter', 'Agent heartbeats received, by outcome.');
    this.family(
      'rouse_agent_conditions_total',
      'counter',
      'Conditions opened and closed on agents by this coordinator, by condition and state.',
    );
    this.family(
      'rouse_interventions_total',
      'counter',
      'Interventions ended by this coordinator, by action, outcome (state) and trigger (ladder or manual).',
    );
    this.family(
      'rouse_task_timeouts_total',
      'counter',
      'Tasks timed out, by reason (heartbeat_timeout: its agent fell silent; agent_reassigned, agent_replaced, …).',
    );
    this.histogram(
      'rouse_agent_heartbeat_duration_seconds',
      'Time to handle an agent heartbeat (write, detectors, answer).',
      LATENCY_BUCKETS_S,
    );
    this.histogram(
      'rouse_intervention_ack_seconds',
      'From a condition opening to the agent (or its supervisor) acknowledging the command the ladder sent for it.',
      DURATION_BUCKETS_S,
    );
    this.histogram(
      'rouse_task_duration_seconds',
      'From start to the end of an attempt (completed or failed), by task type.',
      DURATION_BUCKETS_S,
    );
    this.inc('rouse_tasks_created_total', undefined, 0);
  }

  /** Declare a histogram with these upper bounds. */
  histogram(name: string, help: string, bounds: readonly number[]): void {
    this.histograms.set(name, { help, bounds, series: new Map() });
  }

  observe(name: string, value: number, labels?: Labels): void {
    this.observeKey(name, value, labels ? renderLabels(labels) : '');
  }

  /** `observe` with the labels already rendered. */
  private observeKey(name: string, value: number, key: string): void {
    const h = this.histograms.get(name);
    if (!h) throw new Error(`histogram ${name} is not declared`);
    let s = h.series.get(key);
    if (s === undefined) {
      s = { counts: h.bounds.map(() => 0), sum: 0, count: 0 };
      h.series.set(key, s);
    }
    s.sum += value;
    s.count += 1;
    for (let i = 0; i < h.bounds.length; i++) if (value <= h.bounds[i]!) s.counts[i]! += 1;
  }

  /** Add series read at every render (awaited by `renderAll`). */
  addGaugeSource(source: GaugeSource): void {
    this.gaugeSources.push(source);
  }

  /** `render()` plus the gauges of every source; a failing source is left out. */
  async renderAll(): Promise<string> {
    const out: string[] = [];
    for (const source of this.gaugeSources) {
      const families = await source().catch(() => []);
      for (const f of families) {
        out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
        for (const [labels, v] of f.series) out.push(`${f.name}${renderLabels(labels)} ${v}`);
      }
    }
    return this.render() + (out.length > 0 ? `${out.join('\n')}\n` : '');
  }

  /** Count what the coordinator reports (wired to `coordinator.subscribe`). */
  onEvent(event: StreamEvent): void {
    if (event.type === 'task.created') this.inc('rouse_tasks_created_total');
    else if (event.type === 'agent.condition')
      this.inc('rouse_agent_conditions_total', { condition: event.condition.condition, state: event.state });
    else if (event.type === 'intervention') this.onIntervention(event.intervention);
    else if (event.type === 'task.transition') {
      const to = event.event.to;
      if (to === 'timeout')
        this.inc('rouse_task_timeouts_total', { reason: event.event.reason ?? 'unknown' });
      if ((to === 'completed' || to === 'failed') && event.task.startedAt !== null) {
        const seconds = Math.max(0, event.event.at - event.task.startedAt) / 1000;
        const typeKey = labelKey(this.durationKeys, 'type', event.task.type);
        this.observeKey('rouse_task_duration_seconds', seconds, typeKey);
      }
      const key = labelKey(this.transitionKeys, 'to', to);
      const values = this.families.get('rouse_task_transitions_total')!.values;
      values.set(key, (values.get(key) ?? 0) + 1);
    }
  }

  /** Count ended interventions; time each acknowledgement of a ladder's command from its condition. */
  private onIntervention(i: Intervention): void {
    if (ENDED_INTERVENTION.has(i.state)) {
      const trigger = i.condition === 'manual' ? 'manual' : 'ladder';
      this.inc('rouse_interventions_total', { action: i.action, state: i.state, trigger });
    }
    const since = i.evidence.conditionSince;
    if (typeof since !== 'number') return;
    for (const [key, value] of Object.entries(i.evidence)) {
      if (!key.endsWith('Ack') || value === null || typeof value !== 'object' || Array.isArray(value))
        continue;
      const at = value.at;
      const seen = `${i.id} ${key}`;
      if (typeof at !== 'number' || this.timedAcks.has(seen)) continue;
      if (this.timedAcks.size >= MAX_TIMED_ACKS) this.timedAcks.clear();
      this.timedAcks.add(seen);
      this.observe('rouse_intervention_ack_seconds', Math.max(0, at - since) / 1000);
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
    for (const [name, h] of this.histograms) {
      out.push(`# HELP ${name} ${h.help}`, `# TYPE ${name} histogram`);
      // An unlabelled histogram is rendered (zeros) before its first observation.
      const series = h.series.size === 0 && !LABELLED_HISTOGRAMS.has(name) ? EMPTY_SERIES(h) : h.series;
      for (const [labels, s] of series) {
        const inner = labels === '' ? '' : `${labels.slice(1, -1)},`;
        for (const [i, b] of h.bounds.entries()) out.push(`${name}_bucket{${inner}le="${b}"} ${s.counts[i]}`);
        out.push(
          `${name}_bucket{${inner}le="+Inf"} ${s.count}`,
          `${name}_sum${labels} ${s.sum}`,
          `${name}_count${labels} ${s.count}`,
        );
      }
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

/** Histograms whose series all carry labels (nothing to render before the first observation). */
const LABELLED_HISTOGRAMS = new Set(['rouse_task_duration_seconds']);

const EMPTY_SERIES = (h: HistogramFamily): Map<string, HistogramSeries> =>
  new Map([['', { counts: h.bounds.map(() => 0), sum: 0, count: 0 }]]);

/** The rendered `{name="value"}` of one label, from `cache` (rendered once per value). */
function labelKey(cache: Map<string, string>, name: string, value: string): string {
  let key = cache.get(value);
  if (key === undefined) {
    key = renderLabels({ [name]: value });
    cache.set(value, key);
  }
  return key;
}

function renderLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return `{${parts.join(',')}}`;
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
