/** The task store contract suite: creating, claiming, running, ending tasks, their leases and history. */
import { describe } from 'vitest';
import { type MakeStore, useHarness } from './harness.js';
import { adminContract } from './tasks/admin.js';
import { claimsContract } from './tasks/claims.js';
import { completionContract } from './tasks/completion.js';
import { createAndReadContract } from './tasks/create-and-read.js';
import { expiryContract } from './tasks/expiry.js';
import { holderWritesContract } from './tasks/holder-writes.js';
import { queriesContract } from './tasks/queries.js';
import { transitionsContract } from './tasks/transitions.js';

export function runTaskStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Task store contract: ${name}`, () => {
    const h = useHarness(makeStore);
    createAndReadContract(h);
    claimsContract(h);
    holderWritesContract(h);
    completionContract(h);
    expiryContract(h);
    adminContract(h);
    queriesContract(h);
    transitionsContract(h);
  });
}
