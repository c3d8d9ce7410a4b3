// Rouse dashboard: the page's one script (progressive enhancement; every page works without it).
// The live stream (coalesced refreshes of the live region), keyboard moves, bulk selection with a
// confirmation, copy buttons, and following a running attempt's logs.
const body = document.body;
const live = document.getElementById('live');
const statusEl = document.getElementById('live-status');
const topics = new Set((body.dataset.topics || '').split(' ').filter(Boolean));
const REFRESH_EVERY_MS = 250;

// ---- live region refresh, at most one fetch per REFRESH_EVERY_MS however many changes arrive ----
// The pause between refreshes grows with what the last one cost (20 × its duration, at most 3 s), so a
// page keeps the coordinator busy at most a twentieth of the time and a busy one is asked less often.
// The server shares what it computes between pages; when it answered with data older than a change it
// says when a fresh answer is due (x-rouse-refresh-in), and the page asks once more then.
let pending = false;
let again = null;
let lastText = null;
let inflight = false;
let lastRefresh = 0;
let lastCost = 0;
let refreshes = 0;

// A page nobody sees (a background tab) does not refresh; it catches up when it is shown again.
let hiddenChanges = false;
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && hiddenChanges) {
    hiddenChanges = false;
    schedule();
  }
});

function schedule() {
  if (document.hidden) {
    hiddenChanges = true;
    return;
  }
  if (pending || !live) return;
  pending = true;
  const every = Math.min(3000, Math.max(REFRESH_EVERY_MS, lastCost * 20));
  setTimeout(run, Math.max(0, lastRefresh + every - Date.now()));
}

async function run() {
  if (inflight) {
    setTimeout(run, REFRESH_EVERY_MS);
    return;
  }
  pending = false;
  inflight = true;
  lastRefresh = Date.now();
  try {
    await refresh();
    lastCost = Date.now() - lastRefresh;
  } catch {
    // the stream's state says what is wrong; the next event tries again
  } finally {
    inflight = false;
  }
}

// ---- what moves without an event: relative times tick, heartbeat-driven values are asked for ----
// `time[data-ago]` counts on against the coordinator's clock (the body's data-now, at render) every
// second; a page that shows heartbeat-driven values (data-refresh-every) refreshes at that cadence
// while it is seen, as heartbeats send no event.
const clockOffset = Number(body.dataset.now) > 0 ? Number(body.dataset.now) - Date.now() : 0;
let refreshEvery = Number(body.dataset.refreshEvery) || 0;
let everyTimer = null;

function agoText(ms, now) {
  const d = now - ms;
  if (Math.abs(d) < 1000) return 'now';
  return d >= 0 ? `${durationText(d)} ago` : `in ${durationText(-d)}`;
}

// The same words as the server's (packages/dashboard/src/format.ts `duration`).
function durationText(ms) {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60000) return `${(ms / 1000).toFixed(abs < 10000 ? 1 : 0)} s`;
  const s = Math.round(abs / 1000);
  const two = (big, bigUnit, small, smallUnit) =>
    small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
  if (s < 3600) return two(Math.floor(s / 60), 'min', s % 60, 's');
  if (s < 86400) return two(Math.floor(s / 3600), 'h', Math.floor((s % 3600) / 60), 'min');
  return two(Math.floor(s / 86400), 'd', Math.floor((s % 86400) / 3600), 'h');
}

function tick() {
  if (document.hidden) return;
  const now = Date.now() + clockOffset;
  for (const el of document.querySelectorAll('time[data-ago]')) {
    const at = Date.parse(el.getAttribute('datetime'));
    if (Number.isNaN(at)) continue;
    const text = agoText(at, now);
    if (el.textContent !== text) el.textContent = text;
  }
}
setInterval(tick, 1000);

function armRefreshEvery() {
  if (everyTimer !== null) clearInterval(everyTimer);
  everyTimer = refreshEvery > 0 && live ? setInterval(schedule, refreshEvery) : null;
}
armRefreshEvery();

async function refresh() {
  const res = await fetch(location.pathname + location.search, {
    headers: { 'x-rouse-fragment': '1' },
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (res.status === 401) return signedOut();
  if (!res.ok) return;
  const every = Number(res.headers.get('x-rouse-refresh-every')) || 0;
  if (every !== refreshEvery) {
    refreshEvery = every;
    armRefreshEvery();
  }
  const text = await res.text();
  const refreshIn = Number(res.headers.get('x-rouse-refresh-in'));
  if (refreshIn > 0 && again === null) {
    again = setTimeout(() => {
      again = null;
      schedule();
    }, refreshIn);
  }
  // Nothing changed on the page: leave it alone (no re-layout, selection and focus untouched).
  if (text === lastText) return;
  lastText = text;
  const fresh = document.createElement('template');
  fresh.innerHTML = text;
  morphChildren(live, fresh.content);
  refreshes++;
  body.dataset.refreshes = String(refreshes);
  updateCount();
  follow();
}

// ---- applying a refresh: change only what differs ----
// The live region is brought to the fresh fragment node by node instead of being replaced: a row that
// did not change is left alone (no style, layout or paint for it), and what the user is doing stays as
// it is, because it stays the same element: a ticked box, an opened <details>, the focus, a text
// selection. Children with an identity (an id, a row's link, an event, a log line) are matched by
// it, so a new task at the top of a list inserts one row instead of rewriting every row below it.
const KEY_ATTRIBUTES = ['id', 'data-href', 'data-event', 'data-intervention', 'data-seq'];

function nodeKey(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  for (const name of KEY_ATTRIBUTES) {
    const value = node.getAttribute(name);
    if (value !== null) return `${name}=${value}`;
  }
  return null;
}

function morphChildren(into, from) {
  const keyed = new Map();
  for (let c = into.firstChild; c; c = c.nextSibling) {
    const key = nodeKey(c);
    if (key !== null) keyed.set(key, c);
  }
  const wanted = new Set();
  for (let c = from.firstChild; c; c = c.nextSibling) {
    const key = nodeKey(c);
    if (key !== null) wanted.add(key);
  }
  let current = into.firstChild;
  let next = from.firstChild;
  while (next) {
    const incoming = next;
    next = next.nextSibling;
    // A row that is gone is removed here rather than moved past by every row after it.
    while (current && nodeKey(current) !== null && !wanted.has(nodeKey(current))) {
      const gone = current;
      current = current.nextSibling;
      gone.remove();
    }
    const key = nodeKey(incoming);
    let match = null;
    if (key !== null) {
      match = keyed.get(key) ?? null;
      keyed.delete(key);
    } else if (current && nodeKey(current) === null && current.nodeName === incoming.nodeName) {
      match = current;
    }
    if (match === null || match.nodeName !== incoming.nodeName) {
      into.insertBefore(incoming, current);
      continue;
    }
    if (match === current) current = current.nextSibling;
    else into.insertBefore(match, current);
    morphNode(match, incoming);
  }
  while (current) {
    const gone = current;
    current = current.nextSibling;
    gone.remove();
  }
}

function morphNode(node, incoming) {
  if (node.nodeType !== Node.ELEMENT_NODE) {
    if (node.nodeValue !== incoming.nodeValue) node.nodeValue = incoming.nodeValue;
    return;
  }
  if (node.isEqualNode(incoming)) return;
  // Whether a <details> is open is the user's choice once it is on the page.
  const keep = node.nodeName === 'DETAILS' ? 'open' : null;
  for (const { name, value } of incoming.attributes) {
    if (name !== keep && node.getAttribute(name) !== value) node.setAttribute(name, value);
  }
  for (const name of node.getAttributeNames()) {
    if (name !== keep && !incoming.hasAttribute(name)) node.removeAttribute(name);
  }
  morphChildren(node, incoming);
}

function signedOut() {
  setStatus('off', 'signed out — reload to sign in again');
  stream?.close();
  stream = null;
}

// ---- the event stream ----
let stream = null;
let lastEventId = '';
let retryMs = 1000;

function setStatus(state, text) {
  if (!statusEl) return;
  statusEl.dataset.state = state;
  statusEl.textContent = text;
}

// Does a `changes` frame ({tasks, agents, interventions, alerts, more}) concern this page?
function matches(c) {
  const tasks = c.tasks || [];
  const agents = c.agents || [];
  if (topics.has('tasks') && (tasks.length > 0 || c.more)) return true;
  if (topics.has('agents') && (agents.length > 0 || c.more)) return true;
  if (topics.has('interventions') && c.interventions > 0) return true;
  if (topics.has('alerts') && c.alerts > 0) return true;
  for (const t of topics) {
    if (t.startsWith('task:') && (c.more || tasks.includes(t.slice(5)))) return true;
    if (t.startsWith('agent:') && (c.more || agents.includes(t.slice(6)))) return true;
  }
  return false;
}

function connect() {
  const url = lastEventId ? `/events?lastEventId=${encodeURIComponent(lastEventId)}` : '/events';
  const es = new EventSource(url, { withCredentials: true });
  stream = es;
  setStatus('connecting', 'connecting…');
  es.onopen = () => {
    retryMs = 1000;
    setStatus('live', 'live');
  };
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      // Refused (signed out, server restarting): check why, then try again by ourselves.
      es.close();
      if (stream !== es) return;
      stream = null;
      setStatus('reconnecting', 'reconnecting…');
      fetch('/session', { credentials: 'same-origin', cache: 'no-store' })
        .then((r) => (r.status === 401 ? signedOut() : retry()))
        .catch(retry);
    } else {
      setStatus('reconnecting', 'reconnecting…');
    }
  };
  es.addEventListener('changes', (ev) => {
    if (ev.lastEventId) lastEventId = ev.lastEventId;
    let changes = {};
    try {
      changes = JSON.parse(ev.data);
    } catch {}
    if (matches(changes)) schedule();
  });
  es.addEventListener('resync', (ev) => {
    if (ev.lastEventId) lastEventId = ev.lastEventId;
    schedule();
  });
}

function retry() {
  setTimeout(() => {
    if (!stream) connect();
  }, retryMs);
  retryMs = Math.min(retryMs * 2, 15000);
}

if (body.dataset.csrf !== undefined && live) connect();

// ---- keyboard: / search, j/k move in lists, Enter opens ----
function typing(el) {
  return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

document.addEventListener('keydown', (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
  if (e.key === '/') {
    const search = document.querySelector('[data-search]');
    if (search) {
      e.preventDefault();
      search.focus();
      search.select();
    }
  } else if (e.key === 'j' || e.key === 'k') {
    const rows = [...document.querySelectorAll('[data-row]')];
    if (rows.length === 0) return;
    const at = rows.findIndex((r) => r.classList.contains('current'));
    const next = at === -1 ? 0 : Math.min(rows.length - 1, Math.max(0, at + (e.key === 'j' ? 1 : -1)));
    for (const r of rows) r.classList.remove('current');
    rows[next].classList.add('current');
    rows[next].querySelector('a')?.focus();
    e.preventDefault();
  } else if (e.key === 'Enter') {
    const row = document.querySelector('[data-row].current');
    if (row && !(e.target instanceof HTMLAnchorElement) && !(e.target instanceof HTMLButtonElement)) {
      location.href = row.dataset.href;
    }
  }
});

// ---- bulk selection ----
function updateCount() {
  const n = document.querySelectorAll('input[name="id"][form="bulk"]:checked').length;
  const out = document.querySelector('[data-selected-count]');
  if (out) out.textContent = `${n} selected`;
}

document.addEventListener('change', (e) => {
  const t = e.target;
  if (t.matches?.('[data-select-all]')) {
    for (const box of document.querySelectorAll('input[name="id"][form="bulk"]')) box.checked = t.checked;
  }
  if (t.matches?.('input[name="id"], [data-select-all]')) updateCount();
});

document.addEventListener('submit', (e) => {
  const form = e.target;
  if (!form.matches('[data-bulk]')) return;
  const n = document.querySelectorAll('input[name="id"][form="bulk"]:checked').length;
  const action = e.submitter?.value === 'retry' ? 'Retry' : 'Cancel';
  if (n === 0) {
    e.preventDefault();
    const out = form.querySelector('[data-selected-count]');
    if (out) out.textContent = 'Select tasks first';
    return;
  }
  if (!window.confirm(`${action} ${n} selected task${n === 1 ? '' : 's'}?`)) {
    e.preventDefault();
    return;
  }
  const confirmed = document.createElement('input');
  confirmed.type = 'hidden';
  confirmed.name = 'confirmed';
  confirmed.value = String(n);
  form.append(confirmed);
});

// ---- copy ----
document.addEventListener('click', async (e) => {
  const button = e.target.closest?.('[data-copy]');
  if (!button) return;
  const text = document.querySelector(button.dataset.copy)?.textContent ?? '';
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Copy failed';
  }
  setTimeout(() => {
    button.textContent = 'Copy';
  }, 1500);
});

// ---- following a running attempt's logs (long-poll) ----
let following = false;

async function follow() {
  if (following) return;
  following = true;
  try {
    for (let round = 0; round < 100000; round++) {
      const el = document.querySelector('[data-log-follow]');
      if (!el || el.dataset.final === '1') return;
      const seen = [...document.querySelectorAll('ol.log li[data-seq]')].map((li) => Number(li.dataset.seq));
      const after = Math.max(Number(el.dataset.after) || 0, ...seen);
      const res = await fetch(`${el.dataset.logFollow}?after=${after}`, { credentials: 'same-origin' });
      if (!res.ok) return;
      const data = await res.json();
      let missing = false;
      for (const line of data.lines) {
        if (document.querySelector(`ol.log li[data-seq="${line.seq}"]`)) continue;
        const list = document.querySelector(`ol.log[data-log-attempt="${line.attempt}"]`);
        if (!list) {
          missing = true;
          continue;
        }
        list.insertAdjacentHTML('beforeend', line.html);
      }
      const current = document.querySelector('[data-log-follow]');
      if (current) current.dataset.after = String(data.last);
      if (missing) schedule();
      if (data.final) return;
    }
  } catch {
    // a refresh or the next page load starts it again
  } finally {
    following = false;
  }
}

follow();
