/**
 * How an agent's heartbeats are going, for the agent's own metrics (`worker.heartbeatStats`,
 * `monitor.heartbeatStats`) and the coordinator's view (each heartbeat reports the failures so far
 * in `metrics.heartbeatFailures`): a watchdog needs to know when the reporter itself is struggling.
 */
import type { Now } from '../clock.js';

export interface HeartbeatStatsView {
  /** Heartbeats the coordinator answered. */
  readonly sent: number;
  /** Heartbeats that could not be sent (network, timeout, refused) since the agent started. */
  readonly failed: number;
  /** Failures since the last answered heartbeat. */
  readonly consecutiveFailures: number;
  /** When the coordinator last answered a heartbeat (epoch ms), or null. */
  readonly lastOkAt: number | null;
}

export class HeartbeatStats {
  private readonly now: Now;
  private view: HeartbeatStatsView = { sent: 0, failed: 0, consecutiveFailures: 0, lastOkAt: null };

  constructor(now: Now) {
    this.now = now;
  }

  ok(): void {
    this.view = { ...this.view, sent: this.view.sent + 1, consecutiveFailures: 0, lastOkAt: this.now() };
  }

  failed(): void {
    this.view = {
      ...this.view,
      failed: this.view.failed + 1,
      consecutiveFailures: this.view.consecutiveFailures + 1,
    };
  }

  get current(): HeartbeatStatsView {
    return this.view;
  }
}
