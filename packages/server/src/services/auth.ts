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

/** Who is asking, once authenticated: services enforce what this caller may do. */
export type Caller =
  | { kind: 'admin' }
  | { kind: 'readonly' }
  | { kind: 'enrollment' }
  /** An agent token: the agent and the incarnation it was issued to. */
  | { kind: 'agent'; agentId: string; incarnation: number; agentType: string };

/** Agent tokens start with this, so `authenticate` knows to look them up in the store. */
export const AGENT_TOKEN_PREFIX = 'rsa_';

export interface AuthTokens {
  admin: string;
  enrollment: string;
  readonly?: string | undefined;
}

/**
 * Short fingerprints of the tokens a coordinator accepts, `admin:…,enrollment:…,readonly:…` (12 hex
 * digits of a salted sha256 each; `-` for none), announced with its presence so that coordinators of
 * one store started with different tokens are noticed (shard-manager.ts).
 */
export function tokenFingerprints(tokens: AuthTokens): string {
  const print = (t: string | undefined) =>
    t === undefined
      ? '-'
      : createHash('sha256').update(`rouse-token-fingerprint\0${t}`).digest('hex').slice(0, 12);
  return `admin:${print(tokens.admin)},enrollment:${print(tokens.enrollment)},readonly:${print(tokens.readonly)}`;
}

/** sha256 (hex) of a bearer token: what the store keeps for agent tokens. */
export function hashToken(token: string): string {
  return sha256(token).toString('hex');
}

function sha256(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * A bearer token with its sha256 taken once: a connection that presents the same token with every
 * call (the call stream) hashes it once instead of per call.
 */
export interface PresentedToken {
  readonly token: string;
  /** sha256 of the token, compared in constant time with the static tokens' digests. */
  readonly digest: Buffer;
  /** The digest in hex, as the store keeps agent tokens; null when the token is not an agent's. */
  readonly agentHash: string | null;
}

export function presentToken(token: string): PresentedToken {
  const digest = sha256(token);
  // The hex of the same digest is `hashToken`'s: what the store looks agent tokens up by.
  return { token, digest, agentHash: token.startsWith(AGENT_TOKEN_PREFIX) ? digest.toString('hex') : null };
}

/** A fresh agent token (32 random bytes, base64url, prefixed) and its hash. */
export function newAgentToken(): { token: string; tokenHash: string } {
  const token = AGENT_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, tokenHash: hashToken(token) };
}

export type Authenticate = (token: string | PresentedToken) => Promise<Caller | null>;

export interface Authenticator {
  authenticate: Authenticate;
  /**
   * The agent left, was replaced by a new incarnation, or ended, through this coordinator: its old
   * token stops working here at once.
   */
  forgetAgent(agentId: string): void;
  /**
   * The store just accepted a heartbeat of this agent's `incarnation`, so that incarnation is still
   * active and its token still valid: trust the cached token for another full period.
   */
  confirmAgent(agentId: string, incarnation: number): void;
  /** Agent tokens cached here. */
  readonly remembered: number;
}

/**
 * How long an agent token stays trusted without asking the store again. Every agent request needs
 * its token resolved (one indexed read); most agents heartbeat every few seconds, so the cache
 * answers most of them, and each heartbeat the store accepts renews the entry (the store checked
 * that incarnation is still the active one), so a beating agent's token is looked up once. The
 * trade-off: an agent that left, or was replaced by a new incarnation, through ANOTHER coordinator
 * may still be authenticated here for up to this long — its heartbeats are refused by the store's
 * incarnation check (and renew nothing) and its task writes by the holder checks; a claim would be
 * served, and retried when its claim lease runs out. Through this coordinator, leave and
 * re-registration forget the token at once.
 */
export const AGENT_TOKEN_CACHE_MS = 10_000;
/** Bound on cached tokens; past it the oldest tenth is dropped. */
const AGENT_TOKEN_CACHE_MAX = 100_000;

interface CachedToken {
  agentId: string;
  incarnation: number;
  agentType: string;
  at: number;
}

export function createAuthenticator(tokens: AuthTokens, store: Store, clock: Clock): Authenticator {
  const statics: { digest: Buffer; caller: Caller }[] = [
    { digest: sha256(tokens.admin), caller: { kind: 'admin' } },
    { digest: sha256(tokens.enrollment), caller: { kind: 'enrollment' } },
  ];
  if (tokens.readonly) statics.push({ digest: sha256(tokens.readonly), caller: { kind: 'readonly' } });
  /** token hash → who the store said it belongs to, and when (active agents only); oldest first. */
  const agents = new Map<string, CachedToken>();
  /** agent id → its cached token hash (forgetting an agent is then no scan). */
  const hashOf = new Map<string, string>();
  /** Bumped by every forget, so a lookup that raced with it is not cached. */
  let forgets = 0;

  const drop = (tokenHash: string): void => {
    const entry = agents.get(tokenHash);
    if (entry === undefined) return;
    agents.delete(tokenHash);
    if (hashOf.get(entry.agentId) === tokenHash) hashOf.delete(entry.agentId);
  };

  async function agentCaller(tokenHash: string): Promise<Caller | null> {
    const hit = agents.get(tokenHash);
    const now = clock.now();
    if (hit !== undefined && now - hit.at < AGENT_TOKEN_CACHE_MS && now >= hit.at) {
      return { kind: 'agent', agentId: hit.agentId, incarnation: hit.incarnation, agentType: hit.agentType };
    }
    const before = forgets;
    const owner = await store.resolveAgentToken(tokenHash);
    if (owner === null) {
      drop(tokenHash);
      return null;
    }
    if (before === forgets) {
      drop(tokenHash); // inserted again last: the map stays oldest first
      if (agents.size >= AGENT_TOKEN_CACHE_MAX) {
        for (const oldest of agents.keys()) {
          drop(oldest);
          if (agents.size < AGENT_TOKEN_CACHE_MAX * 0.9) break;
        }
      }
      agents.set(tokenHash, { ...owner, at: now });
      hashOf.set(owner.agentId, tokenHash);
    }
    return { kind: 'agent', ...owner };
  }

  return {
    async authenticate(token) {
      const presented = typeof token === 'string' ? presentToken(token) : token;
      if (presented.token.length === 0) return null;
      if (presented.agentHash !== null) return agentCaller(presented.agentHash);
      let match: Caller | null = null;
      // Compare against every token (no early exit) so timing says nothing about which one matched.
      for (const s of statics)
        if (timingSafeEqual(presented.digest, s.digest) && match === null) match = s.caller;
      return match;
    },
    forgetAgent(agentId) {
      forgets++;
      const tokenHash = hashOf.get(agentId);
      if (tokenHash !== undefined) drop(tokenHash);
    },
    confirmAgent(agentId, incarnation) {
      const tokenHash = hashOf.get(agentId);
      const entry = tokenHash === undefined ? undefined : agents.get(tokenHash);
      if (entry !== undefined && entry.incarnation === incarnation) entry.at = clock.now();
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
