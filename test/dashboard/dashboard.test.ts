/**
 * The dashboard in a real browser (chromium through playwright-core) against a real `rouse serve`:
 * 1. sign in through the one-time URL and through the token form; a wrong token is refused; log out
 *    ends the session; the stream is refused without the cookie; a cross-site POST is refused;
 * 2. a task created through the API appears in the open Tasks view without a reload, and its status
 *    changes live through claim, run and completion; a refresh changes only what changed (rows that
 *    stayed are the same elements; a ticked box and the focus survive);
 * 5. bulk cancel of 50 selected tasks after a confirmation that says 50; a read-only session has no
 *    action buttons and its forged POST is refused;
 * 6. search finds a task by idempotency key and by a word of its payload (`/` focuses the search);
 * 7. axe-core finds no serious or critical violation on any view, light and dark; a screenshot of
 *    each view is written to test-results/dashboard/.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CoordinatorProcess, startCoordinatorProcess } from '../harness/coordinator-process.js';
import { waitFor } from '../harness/wait.js';
import { launchBrowser, type PageGlobals, screenshot, seriousViolations } from './browser.js';

const READONLY = 'rsk_read_dashboard-test-readonly-0123456789';

let coord: CoordinatorProcess;
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
  const newContext = browser.newContext.bind(browser);
  // Fail sooner than the default 30 s when something does not show (the machine is shared: not too soon).
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(20_000);
    return context;
  };
  coord = await startCoordinatorProcess({ env: { ROUSE_READONLY_TOKEN: READONLY } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await coord?.kill('SIGTERM');
});

async function api<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  token = coord.adminToken,
): Promise<T> {
  const res = await fetch(`${coord.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** A fresh login URL, as `rouse dashboard` prints it. */
async function loginUrl(role: 'admin' | 'readonly' = 'admin'): Promise<string> {
  const { path } = await api<{ path: string }>('POST', '/v1/dashboard/login-codes', { role });
  return `${coord.url}${path}`;
}

/** A browser context signed in through a one-time URL. */
async function signedIn(
  role: 'admin' | 'readonly' = 'admin',
  options: { dark?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ bypassCSP: true, colorScheme: options.dark ? 'dark' : 'light' });
  const page = await context.newPage();
  await page.goto(await loginUrl(role));
  await page.waitForURL(`${coord.url}/`);
  return { context, page };
}

async function register(types: string[]): Promise<{ agentId: string; token: string }> {
  const r = await api<{ agent: { id: string }; token: string }>(
    'POST',
    '/v1/agents',
    { agentType: 'browser-test', name: `worker-${types[0]}`, taskTypes: types },
    coord.agentToken,
  );
  return { agentId: r.agent.id, token: r.token };
}

/** Wait until the task's row in the open Tasks view shows `status` (changed by the live stream). */
function statusShows(page: Page, id: string, status: string) {
  return page.waitForFunction(
    ([taskId, want]) =>
      (globalThis as unknown as PageGlobals).document
        .querySelector(`tr[data-href="/tasks/${taskId}"] td[data-status]`)
        ?.textContent?.includes(want) === true,
    [id, status] as const,
  );
}

describe('1. sign in and out', () => {
  it('the one-time URL printed by rouse serve signs in once; the token form refuses a wrong token; log out ends the session', async () => {
    const printed = await waitFor(
      () =>
        coord.child.errLines
          .concat(coord.child.lines)
          .join('\n')
          .match(/http:\/\/\S+\/login\?once=[A-Za-z0-9_-]+/)?.[0],
      { what: 'the login URL in the banner of rouse serve' },
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(printed);
    await page.waitForURL(`${coord.url}/`);
    expect(await page.textContent('h1')).toBe('Overview');
    await screenshot(page, 'overview-after-login');
    // The same link again (another browser) is refused.
    const other = await browser.newContext();
    const second = await other.newPage();
    const refused = await second.goto(printed);
    expect(refused?.status()).toBe(401);
    expect(await second.textContent('[role=alert]')).toContain('used already or has expired');

    // The token form: a wrong token is refused, the read-only token signs in read-only.
    await second.goto(`${coord.url}/login`);
    await second.fill('#token', 'not-a-token');
    await second.click('button[type=submit]');
    expect(await second.textContent('[role=alert]')).toContain('not accepted');
    await second.fill('#token', READONLY);
    await second.click('button[type=submit]');
    await second.waitForURL(`${coord.url}/`);
    expect(await second.textContent('header')).toContain('read-only');
    await screenshot(second, 'login-form-readonly');
    // No token in the page, in a URL or in storage.
    expect(await second.content()).not.toContain(READONLY);
    expect(second.url()).not.toContain(READONLY);
    expect(
      await second.evaluate(
        () =>
          JSON.stringify({ ...(globalThis as unknown as PageGlobals).localStorage }) +
          JSON.stringify({ ...(globalThis as unknown as PageGlobals).sessionStorage }),
      ),
    ).not.toContain(READONLY);
    const cookies = await other.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path])).toEqual([
      ['rouse_session', true, 'Strict', '/'],
    ]);
    expect(cookies[0]!.value).not.toContain(READONLY);

    // Log out: back to the login page, and the old cookie opens nothing any more.
    const oldCookie = cookies[0]!.value;
    await second.click('header button:has-text("Log out")');
    expect(await second.textContent('main')).toContain('Signed out');
    await second.goto(`${coord.url}/tasks`);
    expect(second.url()).toBe(`${coord.url}/login`);
    const replay = await fetch(`${coord.url}/tasks`, {
      headers: { cookie: `rouse_session=${oldCookie}` },
      redirect: 'manual',
    });
    expect(replay.status).toBe(303);
    await context.close();
    await other.close();
  });

  it('the stream is refused without the cookie; a cross-site POST is refused', async () => {
    expect((await fetch(`${coord.url}/events`)).status).toBe(401);
    expect(
      (await fetch(`${coord.url}/events`, { headers: { authorization: `Bearer ${coord.adminToken}` } }))
        .status,
    ).toBe(401);

    const { task } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'victim',
      payload: {},
    });
    const { context, page } = await signedIn('admin');
    // A page on another site posts a form to the dashboard: the Strict cookie is not sent, and the
    // Origin is not the dashboard's.
    const evil: Server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form id="f" method="post" action="${coord.url}/tasks/${task.id}/cancel"><input name="_csrf" value="x"></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((r) => evil.listen(0, 'localhost', r));
    const evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
    const answer = page.waitForResponse((r) => r.url().includes(`/tasks/${task.id}/cancel`));
    await page.goto(evilUrl);
    const res = await answer;
    expect([401, 403]).toContain(res.status());
    // A browser's own post is answered with a page: here the sign-in page (no session cookie came).
    expect(await res.text()).toContain('Your session has ended: sign in again.');
    await new Promise((r) => evil.close(r));
    // With the cookie and the right CSRF token but another Origin: refused all the same.
    await page.goto(`${coord.url}/tasks`);
    const csrf = await page.evaluate(
      () => (globalThis as unknown as PageGlobals).document.body.dataset.csrf ?? '',
    );
    const cookie = (await context.cookies())[0]!;
    const forged = await fetch(`${coord.url}/tasks/${task.id}/cancel`, {
      method: 'POST',
      headers: {
        cookie: `${cookie.name}=${cookie.value}`,
        origin: 'http://evil.example',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: `_csrf=${csrf}`,
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect((await api<{ task: { status: string } }>('GET', `/v1/tasks/${task.id}`)).task.status).toBe(
      'created',
    );
    await context.close();
  });
});

describe('2. live', () => {
  it("a running task's liveness keeps moving without events: times count on, and heartbeats show up", async () => {
    const agent = await register(['beats']);
    const { task } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'beats',
      timing: { heartbeatIntervalMs: 1000, timeoutFactor: 30 },
    });
    const claimed = await api<{ tasks: { id: string; version: number }[] }>(
      'POST',
      `/v1/agents/${agent.agentId}/claim`,
      { types: ['beats'], max: 1, start: true },
      agent.token,
    );
    const version = claimed.tasks[0]!.version;
    const beat = () => api('POST', `/v1/tasks/${task.id}/heartbeat`, { version, progress: 0.5 }, agent.token);
    await beat();
    const { context, page } = await signedIn('admin');
    await page.goto(`${coord.url}/tasks/${task.id}`);
    const last = () => page.textContent('.liveness h3 + p time[data-ago]');
    await page.waitForFunction(
      () =>
        /\d s ago/.test(
          (globalThis as unknown as PageGlobals).document.querySelector('.liveness h3 + p time[data-ago]')
            ?.textContent ?? '',
        ),
      undefined,
      { timeout: 5000 },
    );
    const before = Number.parseFloat((await last()) ?? '');
    // It counts on by itself...
    await page.waitForTimeout(2000);
    expect(Number.parseFloat((await last()) ?? '')).toBeGreaterThan(before + 1);
    // ...and a heartbeat (which sends no event) shows up at the next refresh (every heartbeat interval).
    await beat();
    await page.waitForFunction(
      () => {
        const text =
          (globalThis as unknown as PageGlobals).document.querySelector('.liveness h3 + p time[data-ago]')
            ?.textContent ?? '';
        return text === 'now' || Number.parseFloat(text) < 1.5;
      },
      undefined,
      { timeout: 4000 },
    );
    await context.close();
  });

  it('a task created through the API appears without a reload, and its status follows claim, run and completion', async () => {
    const { context, page } = await signedIn('admin');
    await page.goto(`${coord.url}/tasks?type=live`);
    await page.waitForSelector('#live-status[data-state="live"]');
    await page.evaluate(() => {
      (globalThis as unknown as PageGlobals).notReloaded = true;
    });
    const { task } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'live',
      payload: { n: 1 },
    });
    const status = () => page.textContent(`tr[data-href="/tasks/${task.id}"] td[data-status]`);
    await page.waitForSelector(`a[href="/tasks/${task.id}"]`, { timeout: 1000 });
    expect(await status()).toContain('created');

    const agent = await register(['live']);
    const claimed = await api<{ tasks: { id: string; version: number }[] }>(
      'POST',
      `/v1/agents/${agent.agentId}/claim`,
      { types: ['live'], max: 1 },
      agent.token,
    );
    const version = claimed.tasks[0]!.version;
    await statusShows(page, task.id, 'claimed');
    await api('POST', `/v1/tasks/${task.id}/start`, { version }, agent.token);
    await statusShows(page, task.id, 'running');
    await api('POST', `/v1/tasks/${task.id}/complete`, { version, result: { ok: true } }, agent.token);
    await statusShows(page, task.id, 'completed');
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).notReloaded)).toBe(true);
    await screenshot(page, 'tasks-live');
    await context.close();
  });

  it('a refresh changes only what changed: the rows that stayed are the same elements, and a ticked box and the focus survive it', async () => {
    const created: string[] = [];
    for (const n of [1, 2, 3]) {
      created.push(
        (await api<{ task: { id: string } }>('POST', '/v1/tasks', { type: 'morph', payload: { n } })).task.id,
      );
    }
    const [a, b, c] = created as [string, string, string];
    const { context, page } = await signedIn('admin');
    await page.goto(`${coord.url}/tasks?type=morph`);
    await page.waitForSelector('#live-status[data-state="live"]');
    // A mark that lives on the element object only: it survives as long as the element does.
    await page.evaluate(`document.querySelector('tr[data-href="/tasks/${b}"]').kept = true`);
    await page.check(`input[name="id"][value="${c}"]`);
    await page.focus(`tr[data-href="/tasks/${b}"] a[href="/tasks/${b}"]`);

    const d = (await api<{ task: { id: string } }>('POST', '/v1/tasks', { type: 'morph', payload: { n: 4 } }))
      .task.id;
    const agent = await register(['morph']);
    await api('POST', `/v1/agents/${agent.agentId}/claim`, { types: ['morph'], max: 1 }, agent.token);
    await page.waitForSelector(`tr[data-href="/tasks/${d}"]`);
    await statusShows(page, a, 'claimed');

    // Read in the page (a string: the tests are not compiled with the DOM's types). The region is
    // compared with a fresh render of the same fragment, the Created column aside (its "ago" moves on).
    const seen = (await page.evaluate(`(async () => {
      const live = document.getElementById('live');
      const res = await fetch(location.pathname + location.search, {
        headers: { 'x-rouse-fragment': '1' },
        credentials: 'same-origin',
      });
      const fresh = document.createElement('template');
      fresh.innerHTML = await res.text();
      const withoutAgo = (root) => {
        const box = document.createElement('div');
        for (const n of root.childNodes) box.append(n.cloneNode(true));
        for (const td of box.querySelectorAll('tbody td:last-child')) td.textContent = '';
        return box.innerHTML;
      };
      return {
        sameAsFresh: withoutAgo(live) === withoutAgo(fresh.content),
        kept: document.querySelector('tr[data-href="/tasks/${b}"]').kept === true,
        ticked: document.querySelector('input[name="id"][value="${c}"]').checked,
        selected: document.querySelector('[data-selected-count]').textContent,
        focused: document.activeElement && document.activeElement.getAttribute('href'),
        order: [...document.querySelectorAll('tbody tr')].map((tr) => tr.getAttribute('data-href')),
        refreshes: Number(document.body.dataset.refreshes),
      };
    })()`)) as {
      sameAsFresh: boolean;
      kept: boolean;
      ticked: boolean;
      selected: string;
      focused: string | null;
      order: string[];
      refreshes: number;
    };
    expect(seen.refreshes).toBeGreaterThan(0);
    expect(seen.sameAsFresh).toBe(true);
    expect(seen.kept).toBe(true);
    expect(seen.ticked).toBe(true);
    expect(seen.selected).toBe('1 selected');
    expect(seen.focused).toBe(`/tasks/${b}`);
    expect(seen.order).toEqual([d, c, b, a].map((id) => `/tasks/${id}`));
    await context.close();
  });
});

describe('5. bulk actions and read-only', () => {
  it('cancels 50 selected tasks after a confirmation that says 50', async () => {
    await api('POST', '/v1/tasks/batch', {
      tasks: Array.from({ length: 50 }, (_, i) => ({ type: 'bulk', payload: { i } })),
    });
    const { context, page } = await signedIn('admin');
    await page.goto(`${coord.url}/tasks?type=bulk`);
    expect(await page.locator('input[name="id"]').count()).toBe(50);
    await page.check('[data-select-all]');
    expect(await page.textContent('[data-selected-count]')).toBe('50 selected');
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await Promise.all([page.waitForURL(`${coord.url}/tasks/bulk`), page.click('button[value="cancel"]')]);
    expect(asked).toBe('Cancel 50 selected tasks?');
    expect(await page.textContent('h1')).toBe('Cancelled 50 tasks');
    const after = await api<{ tasks: { status: string }[] }>('GET', '/v1/tasks?type=bulk&limit=100');
    expect(after.tasks.map((t) => t.status)).toEqual(Array(50).fill('cancelled'));
    await context.close();
  });

  it('a read-only session sees no action button and its forged POST is refused', async () => {
    const { task } = await api<{ task: { id: string } }>('POST', '/v1/tasks', { type: 'ro', payload: {} });
    const { context, page } = await signedIn('readonly');
    await page.goto(`${coord.url}/tasks?type=ro`);
    await page.waitForSelector(`a[href="/tasks/${task.id}"]`);
    expect(await page.locator('input[name="id"], [data-bulk], button:has-text("Cancel")').count()).toBe(0);
    await page.goto(`${coord.url}/tasks/${task.id}`);
    expect(await page.locator('main form[method="post"]').count()).toBe(0);
    await screenshot(page, 'task-readonly');
    const forged = await page.evaluate(async (id) => {
      const res = await fetch(`/tasks/${id}/cancel`, {
        method: 'POST',
        body: new URLSearchParams({
          _csrf: (globalThis as unknown as PageGlobals).document.body.dataset.csrf ?? '',
        }),
      });
      return { status: res.status, body: (await res.json()) as { error: { code: string } } };
    }, task.id);
    expect(forged.status).toBe(403);
    expect(forged.body.error.code).toBe('forbidden');
    expect((await api<{ task: { status: string } }>('GET', `/v1/tasks/${task.id}`)).task.status).toBe(
      'created',
    );
    await context.close();
  });
});

describe('6. search', () => {
  it('finds a task by idempotency key and by a word of its payload', async () => {
    const { task: byKey } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'search',
      payload: { customer: 'Acme' },
      idempotencyKey: 'order-8812',
    });
    const { task: byWord } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'search',
      payload: { note: 'reconcile the Zanzibar ledger' },
    });
    const { context, page } = await signedIn('admin');
    await page.goto(`${coord.url}/tasks`);
    await page.keyboard.press('/');
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.id)).toBe(
      'search',
    );
    await page.keyboard.type('order-8812');
    await Promise.all([page.waitForURL(/q=order-8812/), page.keyboard.press('Enter')]);
    expect(
      await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-href'))),
    ).toEqual([`/tasks/${byKey.id}`]);
    await page.fill('#search', 'zanzibar');
    await Promise.all([page.waitForURL(/q=zanzibar/), page.press('#search', 'Enter')]);
    expect(
      await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-href'))),
    ).toEqual([`/tasks/${byWord.id}`]);
    await screenshot(page, 'tasks-search');
    // j moves to the first row, Enter opens it.
    await page.keyboard.press('Escape');
    await page.locator('h1').click();
    await page.keyboard.press('j');
    await Promise.all([page.waitForURL(`${coord.url}/tasks/${byWord.id}`), page.keyboard.press('Enter')]);
    await context.close();
  });
});

describe('layout', () => {
  it('a task type of 110 unbroken characters wraps in its cell: every column of the list stays on a 1280 px screen', async () => {
    const type = `a.very.long.type.name/${'z'.repeat(88)}`;
    await api('POST', '/v1/tasks', { type, payload: {} });
    const { context, page } = await signedIn('admin');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${coord.url}/tasks?type=${encodeURIComponent(type)}`);
    const headers = await page
      .locator('thead th')
      .evaluateAll((ths) => ths.map((th) => [th.textContent?.trim(), th.getBoundingClientRect().right]));
    expect(headers.length).toBeGreaterThan(3);
    for (const [name, right] of headers) expect(right as number, String(name)).toBeLessThanOrEqual(1280);
    // No console error on a fresh page either (the favicon is inline).
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${coord.url}/agents`);
    await page.waitForLoadState('networkidle');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the Agents list', () => {
  it('draws RSS and CPU sparklines from the samples an agent reported, and none for an agent without', async () => {
    const reporting = await register(['sparks']);
    const quiet = await register(['no-sparks']);
    const reported = [
      { rssBytes: 40_000_000, cpuPercent: 5 },
      { rssBytes: 90_000_000, cpuPercent: 60 },
      { rssBytes: 70_000_000, cpuPercent: 20 },
    ];
    for (const metrics of reported) {
      await api(
        'POST',
        `/v1/agents/${reporting.agentId}/heartbeat`,
        { status: 'running', metrics },
        reporting.token,
      );
    }
    await api('POST', `/v1/agents/${quiet.agentId}/heartbeat`, { status: 'idle' }, quiet.token);
    const { context, page } = await signedIn('admin');
    await page.goto(`${coord.url}/agents?type=browser-test`);
    const row = page.locator(`tr[data-href="/agents/${reporting.agentId}"]`);
    const sparks = row.locator('svg.spark');
    expect(await sparks.evaluateAll((svgs) => svgs.map((s) => s.getAttribute('aria-label')))).toEqual([
      'RSS of worker-sparks, recent samples',
      'CPU of worker-sparks, recent samples',
    ]);
    // One point per sample, the highest at the top: the second sample is the largest of both.
    const points = (
      await sparks.evaluateAll((svgs) =>
        svgs.map((s) => s.querySelector('polyline')?.getAttribute('points') ?? ''),
      )
    ).map((text: string) => text.split(' ').map((p) => Number(p.split(',')[1])));
    for (const ys of points) {
      expect(ys).toHaveLength(reported.length);
      expect(Math.min(...ys)).toBe(ys[1]);
    }
    // The latest values beside them, as text.
    expect(await row.locator('td.metric > span').allTextContents()).toEqual(['67 MB', '20 %']);
    expect(await page.locator(`tr[data-href="/agents/${quiet.agentId}"] svg.spark`).count()).toBe(0);
    await screenshot(page, 'agents-sparklines');
    await context.close();
  });
});

describe('7. accessibility and screenshots', () => {
  it('no serious or critical axe violation on any view, light and dark', async () => {
    const agent = await register(['a11y']);
    await api(
      `POST`,
      `/v1/agents/${agent.agentId}/heartbeat`,
      { status: 'idle', metrics: { rssBytes: 50_000_000, cpuPercent: 3 } },
      agent.token,
    );
    const { task } = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      type: 'a11y',
      payload: { prompt: 'summarise <b>this</b> & that', items: [1, 2, 3] },
      labels: { team: 'docs' },
    });
    const views = [
      ['overview', '/'],
      ['tasks', '/tasks'],
      ['task', `/tasks/${task.id}`],
      ['agents', '/agents'],
      ['agent', `/agents/${agent.agentId}`],
      ['interventions', '/interventions'],
      ['alerts', '/alerts'],
      ['dependencies', '/dependencies'],
      ['policies', '/policies'],
    ];
    const found: Record<string, unknown> = {};
    for (const dark of [false, true]) {
      const { context, page } = await signedIn('admin', { dark });
      for (const [name, path] of views) {
        await page.goto(`${coord.url}${path}`);
        await screenshot(page, `${name}${dark ? '-dark' : ''}`);
        const v = await seriousViolations(page);
        if (v.length > 0) found[`${name}${dark ? ' (dark)' : ''}`] = v;
      }
      await context.close();
    }
    const login = await browser.newContext({ bypassCSP: true });
    const page = await login.newPage();
    await page.goto(`${coord.url}/login`);
    await screenshot(page, 'login');
    const v = await seriousViolations(page);
    if (v.length > 0) found.login = v;
    await login.close();
    expect(found).toEqual({});
    // The payload's markup is shown as text, never as markup.
    const { context, page: taskPage } = await signedIn('admin');
    await taskPage.goto(`${coord.url}/tasks/${task.id}`);
    expect(await taskPage.locator('#payload b').count()).toBe(0);
    expect(await taskPage.textContent('#payload')).toContain('<b>this</b>');
    await context.close();
  });
});
