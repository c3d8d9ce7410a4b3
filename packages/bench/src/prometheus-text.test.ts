import { describe, expect, it } from 'vitest';
import { bucketQuantile, histogramBuckets, seriesByLabel, sumSeries } from './prometheus-text.js';

/** Two scrapes in the coordinator's format (`GET /metrics`), 100 heartbeats apart. */
const before = `# HELP rouse_agent_heartbeats_total Agent heartbeats received, by outcome.
# TYPE rouse_agent_heartbeats_total counter
rouse_agent_heartbeats_total{outcome="ok"} 1000
rouse_agent_heartbeats_total{outcome="error"} 2
# HELP rouse_agent_conditions_total Conditions opened and closed.
# TYPE rouse_agent_conditions_total counter
rouse_agent_conditions_total{condition="heartbeat_timeout",state="opened"} 3
rouse_agent_conditions_total{condition="heartbeat_timeout",state="closed"} 3
# TYPE rouse_agent_heartbeat_duration_seconds histogram
rouse_agent_heartbeat_duration_seconds_bucket{le="0.001"} 900
rouse_agent_heartbeat_duration_seconds_bucket{le="0.01"} 990
rouse_agent_heartbeat_duration_seconds_bucket{le="0.1"} 1002
rouse_agent_heartbeat_duration_seconds_bucket{le="+Inf"} 1002
rouse_agent_heartbeat_duration_seconds_sum 1.5
rouse_agent_heartbeat_duration_seconds_count 1002
rouse_agents{status="running"} 9900
rouse_agents{status="lost"} 100
`;
const after = `rouse_agent_heartbeats_total{outcome="ok"} 1100
rouse_agent_heartbeats_total{outcome="error"} 2
rouse_agent_conditions_total{condition="heartbeat_timeout",state="opened"} 3
rouse_agent_conditions_total{condition="progress_stalled",state="opened"} 4
rouse_agent_heartbeat_duration_seconds_bucket{le="0.001"} 950
rouse_agent_heartbeat_duration_seconds_bucket{le="0.01"} 1088
rouse_agent_heartbeat_duration_seconds_bucket{le="0.1"} 1101
rouse_agent_heartbeat_duration_seconds_bucket{le="+Inf"} 1102
rouse_agent_heartbeat_duration_seconds_sum 1.9
rouse_agent_heartbeat_duration_seconds_count 1102
`;

describe('prometheus-text', () => {
  it('sums the series of a name whose labels match, ignoring HELP/TYPE lines and other names', () => {
    expect(sumSeries(before, 'rouse_agent_heartbeats_total')).toBe(1002);
    expect(sumSeries(before, 'rouse_agent_heartbeats_total', { outcome: 'ok' })).toBe(1000);
    expect(sumSeries(after, 'rouse_agent_conditions_total', { state: 'opened' })).toBe(7);
    expect(sumSeries(after, 'rouse_agents')).toBe(0);
    // A name that is a prefix of another is not confused with it.
    expect(sumSeries(before, 'rouse_agent_heartbeat_duration_seconds')).toBe(0);
  });

  it('groups series by one label', () => {
    expect(seriesByLabel(before, 'rouse_agents', 'status')).toEqual({ running: 9900, lost: 100 });
    expect(seriesByLabel(before, 'rouse_agent_conditions_total', 'state')).toEqual({ opened: 3, closed: 3 });
  });

  it('reads cumulative histogram buckets in ascending order, +Inf last', () => {
    expect(histogramBuckets(before, 'rouse_agent_heartbeat_duration_seconds')).toEqual([
      [0.001, 900],
      [0.01, 990],
      [0.1, 1002],
      [Number.POSITIVE_INFINITY, 1002],
    ]);
  });

  it('gives the bucket bound a quantile of the observations between two scrapes falls in', () => {
    const b = histogramBuckets(before, 'rouse_agent_heartbeat_duration_seconds');
    const a = histogramBuckets(after, 'rouse_agent_heartbeat_duration_seconds');
    // Between the scrapes: 50 ≤ 1 ms, 48 in (1, 10] ms, 1 in (10, 100] ms, 1 above.
    expect(bucketQuantile(b, a, 0.5)).toBe(0.001);
    expect(bucketQuantile(b, a, 0.51)).toBe(0.01);
    expect(bucketQuantile(b, a, 0.99)).toBe(0.1);
    expect(bucketQuantile(b, a, 1)).toBe(Number.POSITIVE_INFINITY);
    expect(bucketQuantile(a, a, 0.99)).toBeNull();
  });
});
