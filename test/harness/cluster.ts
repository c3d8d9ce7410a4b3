/**
 * Several real `rouse serve` processes on one PostgreSQL schema (issue 3): shared tokens, one data
 * directory and port each, named `c0`, `c1`, … in the shard leases (`--coordinator-id`). Started one
 * after the other, so `c0` takes every lease shard first and hands the others their shares as they
 * come (64 over 2: c0 keeps 0–31, c1 gets 32–63, within a couple of renewals). Also a Store in the test process on the
 * same schema, to read shard leases and histories directly.
 */
import { randomBytes } from 'node:crypto';
import { createPostgresStore } from '../../packages/server/src/store/postgres/postgres-store.js';
import type { Store } from '../../packages/server/src/store/store.js';
import { type CoordinatorProcess, startCoordinatorProcess } from './coordinator-process.js';

export interface PgTarget {
  connectionString: string;
  schema: string;
}

export interface ClusterOptions {
  /** How many coordinators. @default 2 */
  count?: number;
  /** Extra `rouse serve` arguments for all, or per coordinator. */
  extraArgs?: string[] | ((index: number) => string[]);
  /** @default '1s' (short, so takeovers are quick in tests) */
  shardLeaseTtl?: string;
}

export interface Cluster {
  coordinators: CoordinatorProcess[];
  adminToken: string;
  agentToken: string;
  /** SIGTERM every coordinator still running. */
  stop(): Promise<void>;
}

export function pgArgs(pg: PgTarget): string[] {
  return ['--store', pg.connectionString, '--pg-schema', pg.schema];
}

export async function startCluster(pg: PgTarget, options: ClusterOptions = {}): Promise<Cluster> {
  const adminToken = `rsk_admin_${randomBytes(16).toString('base64url')}`;
  const agentToken = `rsk_enroll_${randomBytes(16).toString('base64url')}`;
  const coordinators: CoordinatorProcess[] = [];
  const count = options.count ?? 2;
  for (let i = 0; i < count; i++) {
    const extra = typeof options.extraArgs === 'function' ? options.extraArgs(i) : (options.extraArgs ?? []);
    coordinators.push(
      await startCoordinatorProcess({
        adminToken,
        agentToken,
        extraArgs: [
          ...pgArgs(pg),
          '--coordinator-id',
          `c${i}`,
          '--shard-lease-ttl',
          options.shardLeaseTtl ?? '1s',
          ...extra,
        ],
      }),
    );
  }
  return {
    coordinators,
    adminToken,
    agentToken,
    async stop() {
      await Promise.all(
        coordinators.map(async (c) => {
          if (c.child.proc.exitCode === null && c.child.proc.signalCode === null) await c.kill('SIGTERM');
        }),
      );
    },
  };
}

/** A Store on the cluster's schema, in the test process (no migrations: the coordinators ran them). */
export function observerStore(pg: PgTarget): Promise<Store> {
  return createPostgresStore({
    connectionString: pg.connectionString,
    schema: pg.schema,
    migrate: false,
    poolSize: 2,
  });
}
