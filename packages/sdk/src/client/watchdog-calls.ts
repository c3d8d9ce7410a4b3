/**
 * What the watchdog did and is set to do: interventions, alerts and the policies in force.
 */
import type {
  Alert,
  AlertState,
  AlertsResponse,
  CheckPoliciesResponse,
  Intervention,
  InterventionState,
  InterventionsResponse,
  PoliciesResponse,
} from '@rouse/protocol';

import { AgentCalls } from './agent-calls.js';

const id = encodeURIComponent;

export abstract class WatchdogCalls extends AgentCalls {
  /** `GET /v1/interventions` — interventions newest first, filtered, a page at a time. */
  listInterventions(
    query: {
      agentId?: string;
      taskId?: string;
      states?: InterventionState[];
      limit?: number;
      cursor?: string;
    } = {},
  ): Promise<InterventionsResponse> {
    const q = new URLSearchParams();
    if (query.agentId !== undefined) q.set('agentId', query.agentId);
    if (query.taskId !== undefined) q.set('taskId', query.taskId);
    if (query.states !== undefined && query.states.length > 0) q.set('state', query.states.join(','));
    if (query.limit !== undefined) q.set('limit', String(query.limit));
    if (query.cursor !== undefined) q.set('cursor', query.cursor);
    const qs = q.toString();
    return this.get<InterventionsResponse>(qs ? `/v1/interventions?${qs}` : '/v1/interventions');
  }

  /** `GET /v1/alerts` — alerts (grouped by agent type and condition) newest first, by state, a page at a time. */
  listAlerts(
    query: { states?: AlertState[]; limit?: number; cursor?: string } = {},
  ): Promise<AlertsResponse> {
    const q = new URLSearchParams();
    if (query.states !== undefined && query.states.length > 0) q.set('state', query.states.join(','));
    if (query.limit !== undefined) q.set('limit', String(query.limit));
    if (query.cursor !== undefined) q.set('cursor', query.cursor);
    const qs = q.toString();
    return this.get<AlertsResponse>(qs ? `/v1/alerts?${qs}` : '/v1/alerts');
  }

  /** `GET /v1/alerts/{id}` — one alert with its notifications (every delivery attempt). */
  async getAlert(alertId: string): Promise<Alert> {
    return (await this.get<{ alert: Alert }>(`/v1/alerts/${id(alertId)}`)).alert;
  }

  /** `GET /v1/interventions/{id}`. */
  async getIntervention(interventionId: string): Promise<Intervention> {
    return (await this.get<{ intervention: Intervention }>(`/v1/interventions/${id(interventionId)}`))
      .intervention;
  }

  // ---- policies ------------------------------------------------------------------------------

  /** `GET /v1/policies` — the watchdog policies in force, their file, and the last refused reload. */
  policies(): Promise<PoliciesResponse> {
    return this.get('/v1/policies');
  }

  /**
   * `POST /v1/policies/check` — validate a policy file's text (YAML) without applying it; `file` is the
   * name errors are reported under. Answers whether or not the file is valid.
   */
  checkPolicies(source: string, file?: string): Promise<CheckPoliciesResponse> {
    const body = JSON.stringify(file === undefined ? { source } : { source, file });
    return this.http.json('POST', '/v1/policies/check', body, { retry: true });
  }
}
