/**
 * Reading `--store`, and what a person is told when a PostgreSQL store cannot be opened. The
 * failures a live server produces (refused, unknown user, missing database) are shown end to end in
 * test/cli/migrate.test.ts; here the ones a test server cannot produce on demand.
 */
import { describe, expect, it } from 'vitest';
import { RouseError, UnavailableError } from './core/errors.js';
import {
  describeStore,
  explainStoreOpenFailure,
  INVALID_POSTGRES_URL,
  isPassingStoreOpenFailure,
  resolveStoreConfig,
} from './server-store.js';

const pg = resolveStoreConfig('postgres://rouse:s3cret@db.internal:6543/jobs', 'unused.db');

describe('resolveStoreConfig and describeStore', () => {
  it('reads PostgreSQL URLs and SQLite forms, and refuses anything else', () => {
    expect(pg).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://rouse:s3cret@db.internal:6543/jobs',
    });
    expect(resolveStoreConfig(undefined, 'a.db')).toEqual({ kind: 'sqlite', path: 'a.db' });
    expect(resolveStoreConfig('sqlite:/x/y.db', 'a.db')).toEqual({ kind: 'sqlite', path: '/x/y.db' });
    expect(() => resolveStoreConfig('mysql://x', 'a.db')).toThrow(/must be a postgres:\/\//);
  });

  it('never prints the password', () => {
    expect(describeStore(pg)).toBe('PostgreSQL postgres://rouse:***@db.internal:6543/jobs');
  });
});

describe('explainStoreOpenFailure', () => {
  const driverError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('names the server and what to check, reading through the store error to the driver error', () => {
    const timeout = new UnavailableError('unreachable', {}, { cause: new Error('timeout expired') });
    expect(explainStoreOpenFailure(timeout, pg)).toBe(
      'PostgreSQL at db.internal:6543 did not answer in time (timeout expired): check the host and port in --store, the network, or raise --connect-timeout',
    );
    expect(explainStoreOpenFailure(driverError('42501', 'permission denied for schema public'), pg)).toMatch(
      /^user "rouse" may not do what Rouse needs on PostgreSQL at db.internal:6543 \(42501: /,
    );
    expect(explainStoreOpenFailure(new Error('self-signed certificate in certificate chain'), pg)).toMatch(
      /^TLS to PostgreSQL at db.internal:6543 failed: self-signed certificate .* --pg-ssl-ca/,
    );
    expect(explainStoreOpenFailure(driverError('57P03', 'the database system is starting up'), pg)).toBe(
      'PostgreSQL at db.internal:6543 cannot take a connection now (57P03: the database system is starting up): retry shortly',
    );
  });

  it('a database named by default is the user name, and the default port is 5432', () => {
    const config = resolveStoreConfig('postgres://alice@localhost', 'unused.db');
    expect(explainStoreOpenFailure(driverError('3D000', 'database "alice" does not exist'), config)).toBe(
      'PostgreSQL at localhost:5432 has no database "alice" (3D000): create it (`createdb alice`) or name another in --store',
    );
  });

  it('says nothing of failures it does not recognise, or of SQLite', () => {
    expect(explainStoreOpenFailure(new RouseError('internal', 'a bug'), pg)).toBeNull();
    expect(explainStoreOpenFailure(driverError('42601', 'syntax error'), pg)).toBeNull();
    const sqlite = resolveStoreConfig(undefined, 'a.db');
    expect(explainStoreOpenFailure(driverError('ECONNREFUSED', 'refused'), sqlite)).toBeNull();
  });

  it('an unparsable URL is said without echoing it', () => {
    const config = { kind: 'postgres' as const, connectionString: 'postgres://u:secret@:::x' };
    expect(explainStoreOpenFailure(new TypeError('Invalid URL'), config)).toBe(INVALID_POSTGRES_URL);
  });
});

describe('isPassingStoreOpenFailure', () => {
  const driverError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('waits out a server that refuses, does not answer or is starting; not a wrong login or database', () => {
    for (const passing of [
      driverError('ECONNREFUSED'),
      new UnavailableError('unreachable', {}, { cause: driverError('ECONNRESET') }),
      driverError('57P03', 'the database system is starting up'),
      driverError('53300', 'too many connections'),
      new Error('Connection terminated due to connection timeout'),
    ])
      expect(isPassingStoreOpenFailure(passing)).toBe(true);
    for (const lasting of [
      driverError('28P01', 'password authentication failed'),
      driverError('3D000', 'database "x" does not exist'),
      driverError('ENOTFOUND'),
      driverError('ERR_INVALID_URL'),
      new Error('The server does not support SSL connections'),
    ])
      expect(isPassingStoreOpenFailure(lasting)).toBe(false);
  });
});
