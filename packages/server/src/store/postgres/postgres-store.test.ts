/** The Store contract suite on PostgreSQL: a fresh schema per test, the test's manual clock injected. */
import { freshSchema } from '../../../../../test/harness/postgres.js';
import { runStoreContract } from '../../test-support/store-contract/index.js';
import { createPostgresStore } from './postgres-store.js';

runStoreContract('postgres', async (clock) => {
  const { connectionString, schema, drop } = await freshSchema('contract');
  const store = await createPostgresStore({ connectionString, schema, clock, poolSize: 4 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await drop();
    },
  };
});
