/**
 * The dashboard's server side, in-process: login codes (admin only, one use), token login, the
 * session cookie's attributes, pages and fragments by session, the stream refused without one,
 * writes refused without the Origin or the CSRF token or from a read-only session, the security
 * headers, the assets, and the search in `GET /v1/tasks?q=`. (The browser tests are in test/dashboard.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TOKENS } from '../test-support/api-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ORIGIN = 'http://localhost:80';

async function loginWithToken(harness: Harness, token: string): Promise<{ cookie: string; csrf: string }> {
  const res = await harness.request('POST', '/login', {
    token: null,
    payload: `token=${encodeURIComponent(token)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN, host: 'localhost:80' },
  });
  expect(res.statusCode).toBe(303);
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  const page = await harness.request('GET', '/', { token: null, headers: { cookie } });
  expect(page.statusCode).toBe(200);
  const csrf = /data-csrf="([^"]+)"/.exec(page.body)?.[1] ?? '';
  return { cookie, csrf };
}

describe('dashboard sign-in', () => {
  it('a login code is minted by admin only, opens one session, and only once', async () => {
    h = await createHarness();
    expect(
      (await h.request('POST', '/v1/dashboard/login-codes', { token: TOKENS.readonly, body: {} })).statusCode,
    ).toBe(403);
    const minted = await h.request('POST', '/v1/dashboard/login-codes', { body: { role: 'readonly' } });
    expect(minted.statusCode).toBe(201);
    const { code, path, role } = minted.json();
    expect(path).toBe(`/login?once=${code}`);
    expect(role).toBe('readonly');

    const first = await h.request('GET', path, { token: null });
    expect(first.statusCode).toBe(200);
    const setCookie = String(first.headers['set-cookie']);
    expect(setCookie).toMatch(/^rouse_session=[A-Za-z0-9_-]{40,}; HttpOnly; SameSite=Strict; Path=\//);
    expect(setCookie).not.toContain(code);
    expect(first.headers['referrer-policy']).toBe('same-origin');
    const again = await h.request('GET', path, { token: null });
    expect(again.statusCode).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();

    const cookie = setCookie.split(';')[0]!;
    const overview = await h.request('GET', '/', { token: null, headers: { cookie } });
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('read-only');
    expect(overview.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('a token opens a session; a wrong or agent token does not; the token is in no page', async () => {
    h = await createHarness();
    const agent = await h.register();
    for (const bad of ['nope', agent.token, TOKENS.enrollment]) {
      const res = await h.request('POST', '/login', {
        token: null,
        payload: `token=${encodeURIComponent(bad)}`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: ORIGIN,
          host: 'localhost:80',
        },
      });
      expect(res.statusCode).toBe(401);
      expect(res.body).toContain('not accepted');
    }
    const { cookie } = await loginWithToken(h, TOKENS.admin);
    const page = await h.request('GET', '/tasks', { token: null, headers: { cookie } });
    expect(page.body).not.toContain(TOKENS.admin);
    expect(cookie).not.toContain(TOKENS.admin);
  });

  it('without a session: pages go to the login page, fragments, the stream and writes are 401', async () => {
    h = await createHarness();
    const page = await h.request('GET', '/tasks', { token: null });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/login');
    const fragment = await h.request('GET', '/tasks', { token: null, headers: { 'x-rouse-fragment': '1' } });
    expect(fragment.statusCode).toBe(401);
    expect(fragment.json().error.code).toBe('unauthorized');
    // A bearer token does not open the browser stream either: it takes the session cookie.
    const stream = await h.request('GET', '/events', { token: TOKENS.admin });
    expect(stream.statusCode).toBe(401);
    const forged = await h.request('GET', '/events', {
      token: null,
      headers: { cookie: 'rouse_session=forged' },
    });
    expect(forged.statusCode).toBe(401);
  });

  it('writes need the same Origin, the CSRF token and an admin session; log out ends the session', async () => {
    h = await createHarness();
    const task = await h.createTask();
    const { cookie, csrf } = await loginWithToken(h, TOKENS.admin);
    const post = (body: string, headers: Record<string, string> = {}) =>
      h!.request('POST', `/tasks/${task.id}/cancel`, {
        token: null,
        payload: body,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie,
          host: 'localhost:80',
          ...headers,
        },
      });
    const crossSite = await post(`_csrf=${csrf}`, { origin: 'http://evil.example' });
    expect(crossSite.statusCode).toBe(403);
    expect(crossSite.json().error.code).toBe('forbidden');
    expect((await post(`_csrf=${csrf}`)).statusCode).toBe(403); // no Origin at all
    expect((await post('_csrf=wrong', { origin: ORIGIN })).statusCode).toBe(403);
    expect((await h.getTask(task.id)).status).toBe('created');
    const ok = await post(`_csrf=${csrf}&back=%2Ftasks`, { origin: ORIGIN });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/tasks');
    expect((await h.getTask(task.id)).status).toBe('cancelled');

    const ro = await loginWithToken(h, TOKENS.readonly);
    const other = await h.createTask();
    const refused = await h.request('POST', `/tasks/${other.id}/cancel`, {
      token: null,
      payload: `_csrf=${ro.csrf}`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: ro.cookie,
        origin: ORIGIN,
        host: 'localhost:80',
      },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.message).toContain('read-only');
    expect((await h.getTask(other.id)).status).toBe('created');

    const out = await h.request('POST', '/logout', {
      token: null,
      payload: `_csrf=${csrf}`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie,
        origin: ORIGIN,
        host: 'localhost:80',
      },
    });
    // Redirected, so that reloading the page after it does not post the form again.
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/login?signed_out');
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    const login = await h.request('GET', '/login?signed_out', { token: null });
    expect(login.payload).toContain('Signed out.');
    expect((await h.request('GET', '/tasks', { token: null, headers: { cookie } })).statusCode).toBe(303);
  });

  it("a browser's refused form post, unknown page or ended session is answered in HTML; the page script's fetches in JSON", async () => {
    h = await createHarness();
    const task = await h.createTask();
    const { cookie, csrf } = await loginWithToken(h, TOKENS.admin);
    await h.request('POST', `/v1/tasks/${task.id}/cancel`);
    const html = { accept: 'text/html,application/xhtml+xml', cookie, origin: ORIGIN, host: 'localhost:80' };
    const again = await h.request('POST', `/tasks/${task.id}/cancel`, {
      token: null,
      payload: `_csrf=${csrf}`,
      headers: { ...html, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(again.statusCode).toBe(409);
    expect(again.headers['content-type']).toContain('text/html');
    expect(again.payload).toContain('That did not work');
    expect(again.payload).toContain(`task ${task.id} cannot go from cancelled`);
    const nope = await h.request('GET', '/nope', { token: null, headers: html });
    expect(nope.statusCode).toBe(404);
    expect(nope.headers['content-type']).toContain('text/html');
    expect(nope.payload).toContain('There is no page at /nope.');
    const signedOut = await h.request('GET', '/nope', { token: null, headers: { accept: 'text/html' } });
    expect(signedOut.payload).toContain('action="/login"');
    const ended = await h.request('POST', `/tasks/${task.id}/retry`, {
      token: null,
      payload: `_csrf=${csrf}`,
      headers: { ...html, cookie: 'rouse_session=gone', 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(ended.statusCode).toBe(401);
    expect(ended.payload).toContain('Your session has ended: sign in again.');
    // The API and the page script's requests keep the protocol's JSON.
    expect((await h.request('GET', '/nope')).json().error.code).toBe('not_found');
    expect((await h.request('GET', '/v1/nope', { headers: { accept: 'text/html' } })).json().error.code).toBe(
      'not_found',
    );
    const fragment = await h.request('GET', '/tasks/tsk_nope', {
      token: null,
      headers: { cookie, 'x-rouse-fragment': '1', accept: 'text/html' },
    });
    expect(fragment.json().error.code).toBe('not_found');
  });

  it('serves its assets compressed and cacheable; an unknown asset is 404', async () => {
    h = await createHarness();
    const js = await h.request('GET', '/assets/app.js', {
      token: null,
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(js.headers['cache-control']).toContain('immutable');
    expect((await h.request('GET', '/assets/nope.js', { token: null })).statusCode).toBe(404);
  });
});

describe('task data downloads', () => {
  it('a blob result is sent as bytes to download, whatever type it was uploaded with', async () => {
    h = await createHarness();
    const agent = await h.register();
    const task = await h.runningTask(agent);
    const evil = Buffer.from('<script>alert(1)</script>');
    await h.request('PUT', `/v1/tasks/${task.id}/result?version=${task.version}`, {
      token: agent.token,
      payload: evil,
      headers: { 'content-type': 'text/html' },
    });
    const { cookie } = await loginWithToken(h, TOKENS.readonly);
    const got = await h.request('GET', `/tasks/${task.id}/result`, { token: null, headers: { cookie } });
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('application/octet-stream');
    expect(got.headers['content-disposition']).toContain('attachment');
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.rawPayload.equals(evil)).toBe(true);
    const payload = await h.request('GET', `/tasks/${task.id}/json/payload`, {
      token: null,
      headers: { cookie },
    });
    expect(payload.json()).toEqual(task.payload);
  });
});

describe('GET /v1/tasks?q=', () => {
  it('finds tasks by idempotency key and by a word of the payload', async () => {
    h = await createHarness();
    const a = await h.createTask({ payload: { note: 'Quarterly Invoice' }, idempotencyKey: 'inv-2026-q4' });
    await h.createTask({ payload: { note: 'other' } });
    const byKey = await h.request('GET', '/v1/tasks?q=inv-2026-q4');
    expect(byKey.json().tasks.map((t: { id: string }) => t.id)).toEqual([a.id]);
    const byWord = await h.request('GET', '/v1/tasks?q=invoice');
    expect(byWord.json().tasks.map((t: { id: string }) => t.id)).toEqual([a.id]);
    expect((await h.request('GET', `/v1/tasks?q=${'x'.repeat(201)}`)).statusCode).toBe(400);
  });
});

/** Read SSE frames from `res` until `want` matches one (bounded by the reader's own end). */
async function frames(res: Response, want: (f: { event: string; id: string; data: string }) => boolean) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const seen: { event: string; id: string; data: string }[] = [];
  for (let i = 0; i < 1000; i++) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut = buffer.indexOf('\n\n');
    while (cut !== -1) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const f = { event: '', id: '', data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) f.event = line.slice(7);
        if (line.startsWith('id: ')) f.id = line.slice(4);
        if (line.startsWith('data: ')) f.data = line.slice(6);
      }
      if (f.event !== '') seen.push(f);
      if (f.event !== '' && want(f)) {
        await reader.cancel();
        return seen;
      }
      cut = buffer.indexOf('\n\n');
    }
  }
  throw new Error(`stream ended before the frame: ${JSON.stringify(seen)}`);
}

describe('the browser stream', () => {
  it('gathers changes into frames, replays what a reconnecting page missed, and asks for a resync otherwise', async () => {
    h = await createHarness();
    const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { cookie } = await loginWithToken(h, TOKENS.readonly);
    const aborts: AbortController[] = [];
    const open = (headers: Record<string, string> = {}) => {
      const abort = new AbortController();
      aborts.push(abort);
      return fetch(`${url}/events`, { headers: { cookie, ...headers }, signal: abort.signal });
    };

    const live = await open();
    expect(live.status).toBe(200);
    const created = await Promise.all([h.createTask(), h.createTask(), h.createTask()]);
    const seen = await frames(
      live,
      (f) => f.event === 'changes' && created.every((t) => f.data.includes(t.id)),
    );
    // Three creations arrived as few frames (the stream gathers them for 250 ms), each naming only ids.
    expect(seen.length).toBeLessThanOrEqual(3);
    const last = seen.at(-1)!;
    expect(JSON.parse(last.data)).toMatchObject({ interventions: 0, alerts: 0 });
    expect(last.data).not.toContain('payload');

    // A page that comes back with the last id it saw gets what it missed, in one frame.
    const missed = await h.createTask();
    const again = await open({ 'last-event-id': last.id });
    const replay = await frames(again, (f) => f.event === 'changes');
    expect(JSON.parse(replay.at(-1)!.data).tasks).toEqual([missed.id]);

    // An id from another process (or long gone) is answered with a resync.
    const stranger = await open({ 'last-event-id': 'deadbeef-12' });
    expect((await frames(stranger, (f) => f.event === 'resync')).at(-1)!.event).toBe('resync');
    for (const a of aborts) a.abort();
    // fetch's connection pool may keep a socket of an aborted stream; cut it so the app can close.
    h.app.server.closeAllConnections();
  });
});

/** The ids a list page shows (`attr` marks each item) and its "Next page" / "First page" links. */
function listPage(body: string, attr: RegExp): { ids: string[]; next: string | null; first: string | null } {
  const decode = (s: string) => s.replace(/&amp;/g, '&');
  const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(body)?.[1];
  const first = /<a href="([^"]+)">First page<\/a>/.exec(body)?.[1];
  return {
    ids: [...body.matchAll(attr)].map((m) => m[1]!),
    next: next === undefined ? null : decode(next),
    first: first === undefined ? null : decode(first),
  };
}

describe('dashboard shared reads', () => {
  it('pages share what they read; an answer older than a change says when to ask again, and that answer is current', async () => {
    h = await createHarness();
    const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { cookie } = await loginWithToken(h, TOKENS.readonly);
    const fragment = () =>
      h!.request('GET', '/tasks', { token: null, headers: { cookie, 'x-rouse-fragment': '1' } });
    // No page open: nothing is shared, every answer is computed and current.
    const early = await h.createTask();
    expect((await fragment()).body).toContain(early.id);
    const later = await h.createTask();
    const fresh = await fragment();
    expect(fresh.body).toContain(later.id);
    expect(fresh.headers['x-rouse-refresh-in']).toBeUndefined();
    // A page is open: its stream is what lets the pages share.
    const abort = new AbortController();
    const live = await fetch(`${url}/events`, { headers: { cookie }, signal: abort.signal });
    expect(live.status).toBe(200);
    const a = await h.createTask();
    await frames(live, (f) => f.event === 'changes' && f.data.includes(a.id));
    const first = await fragment();
    expect(first.body).toContain(a.id);
    expect(first.headers['x-rouse-refresh-in']).toBeUndefined();
    // Nothing changed: the same answer, current.
    const again = await fragment();
    expect(again.body).toBe(first.body);
    expect(again.headers['x-rouse-refresh-in']).toBeUndefined();
    // A change: the next answer is either computed anew, or shared and stale with a time to ask again;
    // asking then shows the change.
    const live2 = await fetch(`${url}/events`, { headers: { cookie }, signal: abort.signal });
    const b = await h.createTask();
    await frames(live2, (f) => f.event === 'changes' && f.data.includes(b.id)); // a page would refetch now
    let res = await fragment();
    for (let i = 0; i < 5 && res.headers['x-rouse-refresh-in'] !== undefined; i++) {
      const wait = Number(res.headers['x-rouse-refresh-in']);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(250);
      expect(res.body).not.toContain(b.id);
      await new Promise((r) => setTimeout(r, wait));
      res = await fragment();
    }
    expect(res.headers['x-rouse-refresh-in']).toBeUndefined();
    expect(res.body).toContain(b.id);
    abort.abort();
    // fetch's connection pool may keep a socket of an aborted stream; cut it so the app can close.
    h.app.server.closeAllConnections();
  });
});

describe('dashboard list pages', () => {
  it('Interventions pages with a cursor, keeping the page size, through to the last page', async () => {
    h = await createHarness();
    for (let i = 0; i < 5; i++) {
      const agent = await h.register();
      const sent = await h.request('POST', `/v1/agents/${agent.agentId}/commands`, {
        body: { type: 'wake', reason: `wake ${i}` },
      });
      expect(sent.statusCode).toBe(202);
    }
    const listed = (await h.request('GET', '/v1/interventions?limit=100')).json().interventions as {
      id: string;
    }[];
    expect(listed).toHaveLength(5);
    const { cookie } = await loginWithToken(h, TOKENS.readonly);
    const get = (url: string) => h!.request('GET', url, { token: null, headers: { cookie } });

    const seen: string[][] = [];
    let url: string | null = '/interventions?limit=2';
    const firsts: (string | null)[] = [];
    for (let i = 0; i < 10 && url !== null; i++) {
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      const p = listPage(res.body, /<li data-intervention="([^"]+)"/g);
      seen.push(p.ids);
      firsts.push(p.first);
      if (p.next !== null) expect(p.next).toMatch(/^\/interventions\?limit=2&cursor=/);
      url = p.next;
    }
    expect(seen.map((ids) => ids.length)).toEqual([2, 2, 1]);
    expect(seen.flat()).toEqual(listed.map((i) => i.id));
    // A later page links back to the first one; the first has no such link.
    expect(firsts).toEqual([null, '/interventions?limit=2', '/interventions?limit=2']);
    // The default page is the whole list here; a page size out of range or a forged cursor is refused.
    expect(listPage((await get('/interventions')).body, /<li data-intervention="([^"]+)"/g).ids).toHaveLength(
      5,
    );
    expect((await get('/interventions?limit=0')).statusCode).toBe(400);
    expect((await get('/interventions?limit=101')).statusCode).toBe(400);
    const forged = await get('/interventions?cursor=nope');
    expect(forged.statusCode).toBe(400);
    expect(forged.body).toContain('cursor');
  });

  it('Alerts pages with a cursor, keeping the state filter and the page size', async () => {
    h = await createHarness();
    const raised: string[] = [];
    for (let i = 0; i < 4; i++) {
      const alert = await h.alerts.raise({
        agentId: `agt_${i}`,
        agentType: `type-${i}`,
        condition: 'progress_stalled',
        severity: 'high',
        summary: `agent ${i} is stuck`,
        source: 'alert_rung',
      });
      raised.push(alert!.id);
    }
    // One of them resolves: the firing pages leave it out.
    await h.alerts.clear({ agentId: 'agt_1', condition: 'progress_stalled' });
    await h.alerts.idle();
    const firing = (await h.request('GET', '/v1/alerts?state=firing&limit=100')).json().alerts as {
      id: string;
    }[];
    expect(firing.map((a) => a.id)).toEqual([raised[3], raised[2], raised[0]]);
    const { cookie } = await loginWithToken(h, TOKENS.readonly);
    const get = (url: string) => h!.request('GET', url, { token: null, headers: { cookie } });

    const seen: string[][] = [];
    let url: string | null = '/alerts?state=firing&limit=2';
    for (let i = 0; i < 10 && url !== null; i++) {
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      const p = listPage(res.body, /<li id="alert-([^"]+)"/g);
      seen.push(p.ids);
      if (p.next !== null) expect(p.next).toMatch(/^\/alerts\?state=firing&limit=2&cursor=/);
      if (i > 0) expect(p.first).toBe('/alerts?state=firing&limit=2');
      url = p.next;
    }
    expect(seen).toEqual([[raised[3], raised[2]], [raised[0]]]);
    const all = listPage((await get('/alerts')).body, /<li id="alert-([^"]+)"/g);
    expect(all.ids).toEqual([...raised].reverse());
    expect(all.next).toBeNull();
  });
});
