/**
 * Reads the coordinator's request counters (`GET /metrics`, Prometheus text) so a workload can report
 * how many HTTP requests of each route its measured phase cost — e.g. claims per task.
 */
import type { HttpClient } from './http-client.js';

/** `{"POST /v1/agents/:agentId/claim": 1234, ...}` — answered requests by method and route. */
export type RequestCounts = Record<string, number>;

export async function requestCounts(http: HttpClient): Promise<RequestCounts | null> {
  let text: string;
  try {
    text = await http.getText('/metrics');
  } catch {
    return null; // metrics not available: the report just lacks the breakdown
  }
  const counts: RequestCounts = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('rouse_http_requests_total{')) continue;
    const method = /method="([^"]*)"/.exec(line)?.[1];
    const route = /route="([^"]*)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!method || !route || !Number.isFinite(value)) continue;
    const key = `${method} ${route}`;
    counts[key] = (counts[key] ?? 0) + value;
  }
  return counts;
}

/** `after - before` per route, leaving out routes with no requests in between. */
export function diffCounts(before: RequestCounts | null, after: RequestCounts | null): RequestCounts | null {
  if (!before || !after) return null;
  const out: RequestCounts = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}
