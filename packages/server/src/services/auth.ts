/**
 * Authentication and authorization (docs/protocol.md "Auth").
 *
 * Tokens: admin (everything), enrollment (register agents only), read-only (every read), and one
 * token per agent, returned once by register and stored only as its sha256. Static tokens are
 * compared in constant time on their sha256 digests.
 *
 * Decisions the protocol leaves open, written down here:
 * - Agents may read (tasks, events, diagnosis, logs, results, agents): they are workers of the same
 *   deployment and the SDK's client exposes every endpoint.
 * - Agents may not create, cancel or retry tasks, nor send commands: those are operator actions.
 * - An agent acts only as itself (claim, heartbeat, leave with another agent's id → `403 forbidden`)
 *   and writes only to tasks it holds (the store checks the holder; another agent's task → `403`).
 * - Admin writes to a task act as its current holder.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { RouseError } from '../core/errors.js';
import type { Store } from '../store/store.js';
import type { Caller } from './coordinator.js';

/** Agent tokens start with this, so `authenticate` knows to look them up in the store. */
export const AGENT_TOKEN_PREFIX = 'rsa_';

export interface AuthTokens {
  admin: string;
  enrollment: string;
  readonly?: string | undefined;
}

/** sha256 (hex) of a bearer token: what the store keeps for agent tokens. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A fresh agent token (32 random bytes, base64url, prefixed) and its hash. */
export function newAgentToken(): { token: string; tokenHash: string } {
  const token = AGENT_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, tokenHash: hashToken(token) };
}

export type Authenticate = (token: string) => Promise<Caller | null>;

export interface Authenticator {
  authenticate: Authenticate;
  /**
   * The agent left, was replaced by a new incarnation, or ended, through this coordinator: its old
   * token stops working here at once.
   */
  forgetAgent(agentId: string): void;
  /** Agent tokens cached here. */
  readonly remembered: number;
}

/**
 * How long an agent token stays trusted without asking the store again. Every agent request needs
 * its token resolved; a store round trip each time costs as much as the claim itself on PostgreSQL.
 * The trade-off: an agent that left (or was replaced by a new incarnation) through ANOTHER
 * coordinator may still be authenticated here for up to this long (its heartbeats are refused by the
 * store's incarnation check) (writes to the tasks it released are still refused by the store's holder checks;
 * a claim would be served, and retried when its claim lease runs out); through this coordinator,
 * leave forgets the token at once.
 */
export const AGENT_TOKEN_CACHE_MS = 1000;
/** Bound on cached tokens (the cache is simply emptied when full). */
const AGENT_TOKEN_CACHE_MAX = 10_000;

export function createAuthenticator(tokens: AuthTokens, store: Store, clock: Clock): Authenticator {
  const digest = (t: string): Buffer => createHash('sha256').update(t).digest();
  const statics: { digest: Buffer; caller: Caller }[] = [
    { digest: digest(tokens.admin), caller: { kind: 'admin' } },
    { digest: digest(tokens.enrollment), caller: { kind: 'enrollment' } },
  ];
  if (tokens.readonly) statics.push({ digest: digest(tokens.readonly), caller: { kind: 'readonly' } });
  /** token hash → agent id, incarnation and when the store said so (only active agents). */
  const agents = new Map<string, { agentId: string; incarnation: number; agentType: string; at: number }>();
  /** Bumped by every leave, so a lookup that raced with it is not cached. */
  let forgets = 0;

  async function agentCaller(tokenHash: string): Promise<Caller | null> {
    const hit = agents.get(tokenHash);
    const now = clock.now();
    if (hit !== undefined && now - hit.at < AGENT_TOKEN_CACHE_MS && now >= hit.at) {
      return { kind: 'agent', agentId: hit.agentId, incarnation: hit.incarnation, agentType: hit.agentType };
    }
    const before = forgets;
    const agent = await store.getAgentByTokenHash(tokenHash);
    if (agent === null) {
      agents.delete(tokenHash);
      return null;
    }
    if (before === forgets) {
      if (agents.size >= AGENT_TOKEN_CACHE_MAX) agents.clear();
      agents.set(tokenHash, {
        agentId: agent.id,
        incarnation: agent.incarnation,
        agentType: agent.agentType,
        at: now,
      });
    }
    return { kind: 'agent', agentId: agent.id, incarnation: agent.incarnation, agentType: agent.agentType };
  }

  return {
    async authenticate(token) {
      if (token.length === 0) return null;
      if (token.startsWith(AGENT_TOKEN_PREFIX)) return agentCaller(hashToken(token));
      const presented = digest(token);
      let match: Caller | null = null;
      // Compare against every token (no early exit) so timing says nothing about which one matched.
      for (const s of statics) if (timingSafeEqual(presented, s.digest) && match === null) match = s.caller;
      return match;
    },
    forgetAgent(agentId) {
      forgets++;
      for (const [hash, entry] of agents) if (entry.agentId === agentId) agents.delete(hash);
    },
    get remembered() {
      return agents.size;
    },
  };
}

function forbidden(message: string, caller: Caller, action: string): RouseError {
  return new RouseError('forbidden', message, { caller: caller.kind, action });
}

/** Reads: admin, read-only and agent tokens. */
export function requireRead(caller: Caller, action: string): void {
  if (caller.kind === 'enrollment') {
    throw forbidden(
      `the enrollment token may only register agents, not ${action}; use the admin or read-only token`,
      caller,
      action,
    );
  }
}

/** Operator actions (create, cancel, retry, commands): admin only. */
export function requireAdmin(caller: Caller, action: string): void {
  if (caller.kind !== 'admin') throw forbidden(`only the admin token may ${action}`, caller, action);
}

/** Registering agents: the enrollment or admin token. */
export function requireEnrollment(caller: Caller): void {
  if (caller.kind !== 'admin' && caller.kind !== 'enrollment') {
    throw forbidden('only the enrollment or admin token may register agents', caller, 'register agents');
  }
}

/** Acting as `agentId` (claim, heartbeat, leave): that agent's own token, or admin. */
export function requireActsAs(caller: Caller, agentId: string, action: string): void {
  if (caller.kind === 'admin') return;
  if (caller.kind === 'agent' && caller.agentId === agentId) return;
  throw forbidden(
    caller.kind === 'agent'
      ? `agent ${caller.agentId} may not ${action} as agent ${agentId}; use its own token`
      : `only agent ${agentId}'s token (or admin) may ${action}`,
    caller,
    action,
  );
}

/**
 * Task writes by the holder: the agent's id for an agent token, `null` for admin (the service then
 * acts as the task's current holder).
 */
export function requireTaskWriter(caller: Caller, action: string): string | null {
  if (caller.kind === 'agent') return caller.agentId;
  if (caller.kind === 'admin') return null;
  throw forbidden(`only the task's holder (its agent token) or admin may ${action}`, caller, action);
}
