/**
 * The auth hook (docs/protocol.md "Auth"): `Authorization: Bearer <token>` → a `Caller` on the request,
 * then the route's access rule. The API blocks combinations that can never be allowed (a read-only
 * token writing, an enrollment token on anything but register, an agent acting as another agent);
 * the coordinator enforces the rest (an agent writing only to tasks it holds).
 *
 * Agent tokens may also read (every `GET` but `/metrics`), as decided in `services/auth.ts`.
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { RouseError } from '../core/errors.js';
import { type PresentedToken, presentToken } from '../services/auth.js';
import type { Caller, Coordinator } from '../services/coordinator.js';

/**
 * Who may call a route (docs/protocol.md "Auth"). Admin may call everything that is not `public`.
 * - `public`: no token (`/healthz`, `/readyz`).
 * - `metrics`: like `read`, or no token when `metricsPublic`.
 * - `read`: admin, read-only and agent tokens (`GET` only for the latter two).
 * - `register`: admin and the enrollment token.
 * - `self`: routes under `/v1/agents/{agentId}`: that agent's own token (any reader for `GET`).
 * - `holder`: holder writes; any agent token passes here, the coordinator checks it holds the task.
 * - `agent`: any agent token (dependency reports).
 * - `query`: a POST that only reads (checking a policy file): admin, read-only and agent tokens.
 * - `admin`: the admin token only.
 */
export type Access =
  | 'public'
  | 'metrics'
  | 'read'
  | 'query'
  | 'register'
  | 'self'
  | 'holder'
  | 'agent'
  | 'admin';

/**
 * The `onRequest` hook for one route with rule `access`, or null for routes that need no token.
 * Attached per route, so no per-request lookup of the route's rule is needed.
 */
export function authHook(
  access: Access,
  coordinator: Coordinator,
  metricsPublic: boolean,
): onRequestAsyncHookHandler | null {
  if (access === 'public' || (access === 'metrics' && metricsPublic)) return null;
  return async (request) => {
    const caller = await authenticate(coordinator, bearerToken(request.headers.authorization));
    checkAccess(access, caller, request);
    request.caller = caller;
  };
}

/** The caller a token belongs to; `unauthorized` when it is unknown or revoked. */
export async function authenticate(
  coordinator: Coordinator,
  token: string | PresentedToken,
): Promise<Caller> {
  const caller = await coordinator.authenticate(token);
  if (!caller) {
    throw new RouseError('unauthorized', 'unknown or revoked token; check the token you were given', {});
  }
  return caller;
}

/**
 * For a stream that outlives its request (SSE): whether the request's token still stands for the
 * same caller (an agent's token stops when it leaves or registers again).
 */
export function stillAuthenticated(
  coordinator: Coordinator,
  request: FastifyRequest,
  caller: Caller,
): () => Promise<boolean> {
  const token = presentToken(bearerToken(request.headers.authorization));
  return async () => {
    const now = await coordinator.authenticate(token);
    if (now === null || now.kind !== caller.kind) return false;
    return (
      now.kind !== 'agent' ||
      caller.kind !== 'agent' ||
      (now.agentId === caller.agentId && now.incarnation === caller.incarnation)
    );
  };
}

/** The token of an `Authorization: Bearer <token>` header; `unauthorized` when missing or malformed. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw new RouseError(
      'unauthorized',
      'missing Authorization header; send "Authorization: Bearer <token>"',
      {},
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw new RouseError(
      'unauthorized',
      'malformed Authorization header; send "Authorization: Bearer <token>"',
      {},
    );
  }
  return match[1];
}

/** What the access rules look at in a request (an HTTP request, or a call of the call stream). */
export interface AccessedRoute {
  method: string;
  params: unknown;
}

/** Throw `forbidden` unless `caller` may use a route with rule `access`. */
export function checkAccess(access: Access, caller: Caller, request: AccessedRoute): void {
  if (caller.kind === 'admin') return;
  const isGet = request.method === 'GET' || request.method === 'HEAD';
  switch (caller.kind) {
    case 'readonly':
      if (access === 'query') return;
      if (isGet && (access === 'read' || access === 'metrics' || access === 'self')) return;
      throw forbidden('the read-only token may only read (GET)');
    case 'enrollment':
      if (access === 'register') return;
      throw forbidden('the enrollment token may only register agents (POST /v1/agents)');
    case 'agent': {
      if (access === 'holder' || access === 'agent' || access === 'query') return;
      // Agents may read like the read-only token (services/auth.ts: the SDK client exposes every read).
      if (isGet && (access === 'read' || access === 'self')) return;
      if (access === 'self') {
        const agentId = (request.params as Record<string, string>).agentId ?? '';
        if (agentId === caller.agentId) return;
        throw forbidden(`this token belongs to agent ${caller.agentId}; it cannot act as agent ${agentId}`);
      }
      throw forbidden('an agent token may only act as its agent, write to tasks it holds, and read');
    }
  }
}

function forbidden(message: string): RouseError {
  return new RouseError('forbidden', message, {});
}
