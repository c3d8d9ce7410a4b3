/** The `dependencies` table's row, the same in both backends, and its mapping to the store's record. */
import type { DependencyState } from '@rouse/protocol';
import type { DependencyRecord } from './store.js';

export const DEPENDENCY_COLUMNS = 'name, state, until, since, reported_by, message, version';

export interface DependencyRow {
  name: string;
  state: DependencyState;
  until: number | null;
  since: number;
  reported_by: string | null;
  message: string | null;
  version: number;
}

export function toDependency(r: DependencyRow): DependencyRecord {
  return {
    name: r.name,
    state: r.state,
    until: r.until,
    since: r.since,
    reportedBy: r.reported_by,
    message: r.message,
    version: r.version,
  };
}
