/**
 * The dashboard in a real browser, following real agent processes:
 * 3. a task waiting for an agent shows the API's diagnosis word for word; a task whose agent was
 *    SIGKILLed shows the timeout transition and the retry; its logs follow while the attempt runs
 *    (and the crashed attempt's stay readable);
 * 4. an agent SIGSTOPped shows `lost`, then the recovery ladder's interventions appear on its page as
 *    the API records them.
 */
import { fileURLToPath } from 'node:url';
import type { Diagnosis, Intervention } from '@rouse/protocol';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { writePolicyFile } from '../harness/policy-file.js';
import { type Spawned, spawnNode } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';
import { startWorkerProcess } from '../harness/worker-process.js';
import { launchBrowser, type PageGlobals, screenshot } from './browser.js';

const HEARTBEAT_AGENT = fileURLToPath(new URL('../fixtures/heartbeat-agent.mjs', import.meta.url));
const POLICY = `
policies:
  - name: watched
    agent_type: watched
    heartbeat: { expected_interval: 200ms, timeout_factor: 5 }
    recovery_actions:
      - action: wake
        on_condition: heartbeat_timeout
        timeout: 1s
      - action: terminate
        on_condition: heartbeat_timeout
        timeout: 1s
`;

let coord: CoordinatorProcess;
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
  coord = await startCoordinatorProcess({ extraArgs: ['--policies', writePolicyFile(POLICY)] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await coord?.kill('SIGTERM');
});

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${coord.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${coord.adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

async function signedIn(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  // Generous: these tests share two cores with a coordinator, workers and another browser.
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  const { path } = await api<{ path: string }>('POST', '/v1/dashboard/login-codes', {});
  await page.goto(`${coord.url}${path}`);
  await page.waitForURL(`${coord.url}/`);
  return { context, page };
}

const text = (page: Page, selector: string) => page.locator(selector).allTextContents();

describe('3. a task on its page', () => {
  it('a task waiting for an agent shows the diagnosis of the API, word for word', async () => {
    const { task } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'nobody-serves-this',
      payload: {},
    });
    const { context, page } = await signedIn();
    await page.goto(`${coord.url}/tasks/${task.id}`);
    const diagnosis = await api<Diagnosis>('GET', `/v1/tasks/${task.id}/diagnosis`);
    expect(diagnosis.reasons.map((r) => r.code)).toContain('no_agents_for_type');
    expect(await page.textContent('[data-diagnosis-summary]')).toBe(diagnosis.summary);
    expect(await text(page, '[data-reason-message]')).toEqual(diagnosis.reasons.map((r) => r.message));
    expect(await text(page, '.suggestions li')).toEqual(diagnosis.suggestions);
    await screenshot(page, 'task-waiting');
    await context.close();
  });

  it('logs follow while the attempt runs; the SIGKILLed attempt times out and the retry completes, live', async () => {
    const first = startWorkerProcess(coord, { types: ['logs'], heartbeatMs: 200, name: 'doomed' });
    await first.waitFor('registered', undefined, 30_000);
    const { task } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'logs',
      payload: { mode: 'log-then-hang', everyMs: 150 },
      timing: { heartbeatIntervalMs: 200, timeoutFactor: 3 },
    });
    await first.waitFor('logging', task.id, 30_000);
    const { context, page } = await signedIn();
    await page.goto(`${coord.url}/tasks/${task.id}`);
    const lines = () => page.locator('ol.log[data-log-attempt="1"] li').count();
    const before = await lines();
    await page.evaluate(() => {
      (globalThis as unknown as PageGlobals).notReloaded = true;
    });
    // New lines arrive on the open page.
    await page.waitForFunction(
      (n) =>
        ((
          globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
        ).document.querySelectorAll('ol.log[data-log-attempt="1"] li').length ?? 0) >=
        n + 4,
      before,
    );
    await screenshot(page, 'task-logs-following');

    first.kill('SIGKILL');
    await first.exited;
    // The timeout transition appears on the timeline, without a reload.
    await page.waitForFunction(() =>
      [
        ...((
          globalThis as unknown as {
            document: { querySelectorAll(s: string): Iterable<{ textContent: string | null }> };
          }
        ).document.querySelectorAll('.timeline li') ?? []),
      ].some((li) => /running\s*→\s*timeout/.test(li.textContent ?? '')),
    );
    const second = startWorkerProcess(coord, { types: ['logs'], heartbeatMs: 200, name: 'rescuer' });
    await second.waitFor('completed', task.id, 30_000);
    await page.waitForFunction(() =>
      (globalThis as unknown as PageGlobals).document
        .querySelector('.task-head')
        ?.textContent?.includes('completed'),
    );
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).notReloaded)).toBe(true);
    const events = await api<{ events: { from: string | null; to: string; attempt: number }[] }>(
      'GET',
      `/v1/tasks/${task.id}/events`,
    );
    expect(events.events.map((e) => `${e.attempt}:${e.to}`)).toContain('1:timeout');
    expect(events.events.map((e) => `${e.attempt}:${e.to}`)).toContain('2:completed');
    // The attempts side by side, the crashed one's logs still there.
    expect(await text(page, 'section[aria-labelledby="t-attempts"] tbody th')).toEqual(['1', '2']);
    expect(await page.locator('ol.log[data-log-attempt="1"] li').count()).toBeGreaterThanOrEqual(before + 4);
    await screenshot(page, 'task-retried');
    second.kill('SIGTERM');
    await second.exited;
    await context.close();
  });
});

describe('4. an agent on its page', () => {
  it('a SIGSTOPped agent shows lost, then the ladder’s interventions appear as the API records them', async () => {
    const agent: Spawned = spawnNode([HEARTBEAT_AGENT], {
      ROUSE_URL: coord.url,
      ROUSE_AGENT_TOKEN: coord.agentToken,
      AGENT_TYPE: 'watched',
      STATUS: 'idle',
    });
    try {
      const { agentId } = await agent.waitForLine<{ event: string; agentId: string }>(
        (m) => m.event === 'registered',
      );
      await agent.waitForLine<{ event: string }>((m) => m.event === 'beat');
      const { context, page } = await signedIn();
      await page.goto(`${coord.url}/agents/${agentId}`);
      await page.waitForSelector('#live-status[data-state="live"]');
      expect(await page.textContent('.task-head .badge')).toBe('idle');

      agent.kill('SIGSTOP');
      await page.waitForFunction(
        () =>
          (globalThis as unknown as PageGlobals).document.querySelector('.task-head .badge')?.textContent ===
          'lost',
      );
      await screenshot(page, 'agent-lost');
      // Every intervention the API lists shows on the page, in its state, without a reload.
      const shown = async (): Promise<boolean> => {
        const listed = (
          await api<{ interventions: Intervention[] }>('GET', `/v1/interventions?agentId=${agentId}`)
        ).interventions;
        if (listed.length < 2) return false;
        for (const i of listed) {
          const li = page.locator(`[data-intervention="${i.id}"]`);
          if ((await li.count()) !== 1) return false;
          const t = (await li.textContent()) ?? '';
          if (!t.includes(i.action) || !t.includes(i.state)) return false;
        }
        return true;
      };
      await waitFor(shown, {
        what: 'the ladder’s interventions on the agent page',
        timeoutMs: 20_000,
        intervalMs: 250,
      });
      const listed = (
        await api<{ interventions: Intervention[] }>('GET', `/v1/interventions?agentId=${agentId}`)
      ).interventions;
      expect(listed.map((i) => i.action)).toContain('wake');
      await screenshot(page, 'agent-interventions');
      await context.close();
    } finally {
      agent.kill('SIGKILL');
      await agent.exited;
    }
  });
});
