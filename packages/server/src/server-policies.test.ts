/**
 * The policy file of `rouse serve` (issue 9, test 8's hot reload): picked up from the data directory
 * (also when it appears later), hot-reloaded — a valid edit applies within a second, a broken one is
 * refused with file:line:field in the log and the old policies stay — and a bad file at start fails it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PoliciesResponse } from '@rouse/protocol';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRouseServer } from './server.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rouse-policies-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const policy = (interval: string) => `policies:
  - name: reviewers
    agent_type: reviewer
    heartbeat: { expected_interval: ${interval} }
`;

async function policies(url: string, token: string): Promise<PoliciesResponse> {
  const res = await fetch(`${url}/v1/policies`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as PoliciesResponse;
}

/** Poll (bounded) until `pred` holds of the policies in force. */
async function until(
  url: string,
  token: string,
  pred: (p: PoliciesResponse) => boolean,
): Promise<PoliciesResponse> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const p = await policies(url, token);
    if (pred(p)) return p;
    if (Date.now() > deadline) throw new Error(`policies never matched: ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const intervalOf = (p: PoliciesResponse) =>
  p.policies.find((x) => x.name === 'reviewers')?.heartbeat.expectedIntervalMs;

describe('the policy file of rouse serve', () => {
  it('takes the data directory’s policies.yaml when it appears, reloads valid edits, keeps the old ones on a broken edit', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const server = await startRouseServer({
      port: 0,
      dataDir: dir,
      db: ':memory:',
      logger,
      policiesPollMs: 50,
    });
    try {
      expect((await policies(server.url, server.adminToken)).source).toBeNull();
      const file = join(dir, 'policies.yaml');
      await writeFile(file, policy('10s'));
      const first = await until(server.url, server.adminToken, (p) => intervalOf(p) === 10_000);
      expect(first.source).toBe(file);
      // An agent of that type registers under the policy in force.
      const reg = await fetch(`${server.url}/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.agentToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agentType: 'reviewer' }),
      });
      expect(await reg.json()).toMatchObject({ heartbeatIntervalMs: 10_000, agent: { policy: 'reviewers' } });

      await writeFile(file, policy('20s'));
      await until(server.url, server.adminToken, (p) => intervalOf(p) === 20_000);

      await writeFile(file, `${policy('30s')}    bogus_field: 1\n`);
      const refused = await until(server.url, server.adminToken, (p) => p.lastError !== null);
      expect(intervalOf(refused)).toBe(20_000);
      expect(refused.lastError?.errors[0]).toMatchObject({ file, line: 5, path: 'policies.0.bogus_field' });
      expect(lines.some((l) => l.includes(`${file}:5:`) && l.includes('bogus_field'))).toBe(true);

      await writeFile(file, policy('40s'));
      const fixed = await until(server.url, server.adminToken, (p) => intervalOf(p) === 40_000);
      expect(fixed.lastError).toBeNull();

      // Gone, then a directory in its place: said as the last error; the policies in force stay.
      await rm(file);
      const gone = await until(server.url, server.adminToken, (p) => p.lastError !== null);
      expect(intervalOf(gone)).toBe(40_000);
      expect(gone.lastError?.errors[0]).toMatchObject({
        file,
        line: 0,
        message: expect.stringMatching(/the file is gone/),
      });
      await mkdir(file);
      const unreadable = await until(server.url, server.adminToken, (p) =>
        /cannot read the file \(EISDIR\)/.test(p.lastError?.errors[0]?.message ?? ''),
      );
      expect(intervalOf(unreadable)).toBe(40_000);
      await rm(file, { recursive: true });
      await writeFile(file, policy('50s'));
      const back = await until(server.url, server.adminToken, (p) => intervalOf(p) === 50_000);
      expect(back.lastError).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('a policy file given explicitly must exist and be valid: the start fails, naming the line', async () => {
    const logger = pino({ level: 'silent' });
    await expect(
      startRouseServer({
        port: 0,
        dataDir: dir,
        db: ':memory:',
        logger,
        policiesFile: join(dir, 'nope.yaml'),
      }),
    ).rejects.toThrow(/does not exist/);
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      'policies:\n  - name: x\n    agent_type: x\n    heartbeat: { expected_interval: 5 }\n    quiet_period: soon\n',
    );
    await expect(
      startRouseServer({ port: 0, dataDir: dir, db: ':memory:', logger, policiesFile: bad }),
    ).rejects.toThrow(new RegExp(`${bad.replaceAll('/', '\\/')}:5:`));
  });
});
