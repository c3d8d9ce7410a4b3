/**
 * The process metrics an agent heartbeat carries: resident memory, CPU use since the last sample
 * (percent of one core) and event-loop lag (p99 of the delay beyond the sampling resolution).
 */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { AgentMetrics } from '@rouse/protocol';

const RESOLUTION_MS = 20;

export class ProcessMetrics {
  private histogram: IntervalHistogram | undefined;
  private lastCpu = process.cpuUsage();
  private lastAtMs = performance.now();

  start(): void {
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    this.lastCpu = process.cpuUsage();
    this.lastAtMs = performance.now();
  }

  stop(): void {
    this.histogram?.disable();
    this.histogram = undefined;
  }

  /** Metrics since the previous sample. */
  sample(): AgentMetrics {
    const nowMs = performance.now();
    const cpu = process.cpuUsage(this.lastCpu);
    const elapsedMs = nowMs - this.lastAtMs;
    this.lastCpu = process.cpuUsage();
    this.lastAtMs = nowMs;
    const metrics: AgentMetrics = { rssBytes: process.memoryUsage.rss() };
    if (elapsedMs > 0) metrics.cpuPercent = round1(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100);
    const h = this.histogram;
    if (h && h.count > 0) {
      metrics.loopLagMs = round1(Math.max(0, h.percentile(99) / 1e6 - RESOLUTION_MS));
      h.reset();
    }
    return metrics;
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
