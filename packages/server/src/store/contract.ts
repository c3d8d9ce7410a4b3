/**
 * The Store contract suite: every Store implementation runs it and must pass it unchanged (SQLite
 * now, PostgreSQL next). It defines vitest `describe`/`it` blocks, so call it from a test file:
 *
 * ```ts
 * runStoreContract('sqlite :memory:', async (clock) => {
 *   const store = createSqliteStore({ path: ':memory:', clock });
 *   return { store, cleanup: () => store.close() };
 * });
 * ```
 *
 * `makeStore` gets a fresh `ManualClock` per test and must return an empty store whose time is that
 * clock's (a PostgreSQL backend under test reads it instead of `now()`); `cleanup` closes it and
 * removes whatever it created.
 */
import { describe } from 'vitest';
import { adminContract } from './contract/admin.js';
import { agentsContract } from './contract/agents.js';
import { claimsContract } from './contract/claims.js';
import { completionContract } from './contract/completion.js';
import { createAndReadContract } from './contract/create-and-read.js';
import { expiryContract } from './contract/expiry.js';
import { type MakeStore, useHarness } from './contract/harness.js';
import { holderWritesContract } from './contract/holder-writes.js';
import { queriesContract } from './contract/queries.js';
import { shardsContract } from './contract/shards.js';
import { transitionsContract } from './contract/transitions.js';

export type { MakeStore } from './contract/harness.js';

export function runStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Store contract: ${name}`, () => {
    const h = useHarness(makeStore);
    createAndReadContract(h);
    claimsContract(h);
    holderWritesContract(h);
    completionContract(h);
    expiryContract(h);
    adminContract(h);
    queriesContract(h);
    agentsContract(h);
    transitionsContract(h);
    shardsContract(h);
  });
}
