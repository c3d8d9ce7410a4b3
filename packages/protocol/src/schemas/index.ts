/**
 * Zod schemas for every request body and query of protocol v1. The server validates at the edge with
 * these and publishes them as OpenAPI (`z.toJSONSchema`); the request wire types are inferred from
 * them. Limits here are part of the contract. A separate entry point (`@rouse/protocol/schemas`), so
 * code that needs only the types never loads zod.
 */
export * from './agents.js';
export * from './common.js';
export * from './dashboard.js';
export * from './snapshots.js';
export * from './tasks.js';
export * from './watchdog.js';
