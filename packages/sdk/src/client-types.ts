/** Queries and answers of {@link Client} methods that are not wire types of the protocol. */
import type { AgentStatus, TaskStatus } from '@rouse/protocol';

/** Query of {@link Client.listTasks}. */
export interface ListTasksQuery {
  /** One status or several (any of them). */
  status?: TaskStatus | TaskStatus[];
  type?: string;
  agentId?: string;
  /** `key:value` pairs; a task must carry all of them. */
  label?: string[];
  /** Page size (1..1000). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** Query of {@link Client.listAgents}. */
export interface ListAgentsQuery {
  /** One derived status or several (any of them). */
  status?: AgentStatus | AgentStatus[];
  agentType?: string;
  /** Agents registered for this task type, or that last polled for it. */
  taskType?: string;
  /** Agents per page (`listAgentsPage`). @default 1000 */
  limit?: number;
  /** A previous page's `nextCursor` (`listAgentsPage`). */
  cursor?: string;
}

/** A stored result as fetched by {@link Client.getResult}. */
export interface FetchedResult {
  contentType: string;
  body: Buffer;
  /** The parsed body when the content type is JSON. */
  json?: unknown;
}
