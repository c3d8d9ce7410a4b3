/**
 * What a monitored agent says about itself between heartbeats: its status (and why), progress, phase
 * and metadata. Each setter checks its input and marks the state unsent; the next heartbeat carries it
 * ({@link ReportedState.request}), and the monitor's final beat on stop sends what is still unsent.
 */
import type { AgentHeartbeatRequest, Json, JsonObject, ReportedAgentStatus } from '@rouse/protocol';
import { InvalidOptionError } from '../errors.js';
import { checkMetadata, MAX_METADATA_BYTES, mergeMetadata } from './metadata.js';

/** What a monitored agent may report itself as (`terminating` is the monitor's own, while it stops). */
export type MonitorStatus = Exclude<ReportedAgentStatus, 'terminating'>;
const STATUSES: readonly MonitorStatus[] = ['idle', 'running', 'error'];
const MAX_TEXT = 1024;
const MAX_PHASE = 256;

export class ReportedState {
  private reported: MonitorStatus = 'running';
  private statusMessage: string | undefined;
  private progressValue: number | undefined;
  private phaseText: string | undefined;
  private meta: JsonObject;
  /** Changes not yet carried by an answered beat. */
  unsent = true;

  constructor(metadata: JsonObject) {
    this.meta = { ...metadata };
  }

  get status(): MonitorStatus {
    return this.reported;
  }

  setProgress(value: number, phase?: string): void {
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
      throw new InvalidOptionError('progress(value)', 'must be a number from 0 to 1', value);
    }
    if (phase !== undefined) this.setPhase(phase);
    this.progressValue = value;
    this.unsent = true;
  }

  setPhase(text: string): void {
    if (typeof text !== 'string' || text.length > MAX_PHASE) {
      throw new InvalidOptionError(
        'phase(text)',
        `must be a string of at most ${MAX_PHASE} characters`,
        text,
      );
    }
    this.phaseText = text;
    this.unsent = true;
  }

  /** Merge `patch` (`undefined` removes a key); throws, leaving the metadata unchanged, past the limit. */
  mergeMetadata(patch: Record<string, Json | undefined>): void {
    this.meta = checkMetadata(mergeMetadata(this.meta, patch), 'metadata(patch)');
    this.unsent = true;
  }

  /** Set one metadata field the monitor keeps itself (the iteration counter); not checked. */
  setField(field: string, value: Json): void {
    this.meta = { ...this.meta, [field]: value };
    this.unsent = true;
  }

  setStatus(status: MonitorStatus, message?: string): void {
    if (!STATUSES.includes(status)) {
      throw new InvalidOptionError('status(status)', `must be one of ${STATUSES.join(', ')}`, status);
    }
    this.reported = status;
    this.statusMessage = message === undefined ? undefined : String(message).slice(0, MAX_TEXT);
    this.unsent = true;
  }

  /** The heartbeat's self-report (without metrics, dependencies or acks). */
  request(): AgentHeartbeatRequest {
    const req: AgentHeartbeatRequest = { status: this.reported };
    if (this.statusMessage !== undefined) req.statusMessage = this.statusMessage;
    if (this.progressValue !== undefined) req.progress = this.progressValue;
    if (this.phaseText !== undefined) req.phase = this.phaseText;
    // the counter may have grown past the limit since metadata() checked it: leave metadata out then
    if (Object.keys(this.meta).length > 0 && JSON.stringify(this.meta).length <= MAX_METADATA_BYTES) {
      req.metadata = this.meta;
    }
    return req;
  }
}
