/**
 * The page shell every view shares: landmarks (header with the main navigation, main), a skip link,
 * the live-stream indicator, log out, and the data the page's script needs (`data-csrf`, the topics
 * whose events refresh the live region). No inline script or style: the pages run under a strict
 * Content-Security-Policy (`script-src 'self'`).
 */
import { type Html, html } from './html.js';

export type Role = 'admin' | 'readonly';

/** What every view is rendered with. */
export interface ViewContext {
  /** The coordinator's clock at render time (epoch ms). */
  now: number;
  role: Role;
  /** The session's CSRF token, put in every form that writes. */
  csrf: string;
  /** Path and query of this page (forms return here after an action). */
  here: string;
}

/** A rendered view: the static part above its live region, and the live region. */
export interface View {
  title: string;
  /** Which navigation entry is current. */
  nav: NavKey;
  /** Events that refresh the live region: `tasks`, `agents`, `alerts`, `interventions`, `task:<id>`, `agent:<id>`. */
  topics: string[];
  /** Above the live region: filters, actions (not replaced while the user types). */
  head?: Html;
  live: Html;
  /**
   * Refresh the live region this often even without an event (ms): what changes with every
   * heartbeat (a running task's liveness, agents' last heartbeats) has no event of its own.
   */
  refreshEveryMs?: number;
}

export type NavKey =
  | 'overview'
  | 'tasks'
  | 'agents'
  | 'interventions'
  | 'alerts'
  | 'dependencies'
  | 'policies'
  | 'none';

const NAV: [NavKey, string, string][] = [
  ['overview', '/', 'Overview'],
  ['tasks', '/tasks', 'Tasks'],
  ['agents', '/agents', 'Agents'],
  ['interventions', '/interventions', 'Interventions'],
  ['alerts', '/alerts', 'Alerts'],
  ['dependencies', '/dependencies', 'Dependencies'],
  ['policies', '/policies', 'Policies'],
];

/** The stylesheet and script, with a version so that a new build is not served from a stale cache. */
export interface AssetUrls {
  css: string;
  js: string;
}

function head(title: string, assets: AssetUrls, extra: Html | string = ''): Html {
  return html`<head>
${extra}
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title} · Rouse</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.css}">
<script type="module" src="${assets.js}"></script>
</head>`;
}

/** A whole page around a view. */
export function page(view: View, ctx: ViewContext, assets: AssetUrls): Html {
  return html`<!doctype html>
<html lang="en">
${head(view.title, assets)}
<body data-csrf="${ctx.csrf}" data-role="${ctx.role}" data-topics="${view.topics.join(' ')}" data-now="${ctx.now}"${
    view.refreshEveryMs === undefined ? '' : html` data-refresh-every="${view.refreshEveryMs}"`
  }>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="/">Rouse</a>
<nav aria-label="Main"><ul>${NAV.map(
    ([key, href, label]) =>
      html`<li><a href="${href}"${key === view.nav ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}</ul></nav>
<p id="live-status" class="live-status" role="status" aria-live="polite" data-state="off">not live</p>
${ctx.role === 'readonly' ? html`<p class="badge role">read-only</p>` : ''}
<form method="post" action="/logout" class="logout">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<button type="submit">Log out</button>
</form>
</header>
<main id="main" tabindex="-1">
<h1>${view.title}</h1>
${view.head ?? ''}
<div id="live" class="live">${view.live}</div>
</main>
</body>
</html>`;
}

/** A page without a session: the login form, and the notices around it. */
export function loginPage(
  options: { message?: string; error?: string; status?: number },
  assets: AssetUrls,
): Html {
  return html`<!doctype html>
<html lang="en">
${head('Sign in', assets)}
<body class="login">
<main id="main">
<h1>Rouse</h1>
<p>Open the login link that <code>rouse serve</code> or <code>rouse dashboard</code> printed, or paste a token.</p>
${options.message ? html`<p class="notice" role="status">${options.message}</p>` : ''}
${options.error ? html`<p class="error" role="alert" id="login-error">${options.error}</p>` : ''}
<form method="post" action="/login" class="login-form">
<label for="token">Admin or read-only token</label>
<input id="token" name="token" type="password" autocomplete="off" required${
    options.error ? html` aria-describedby="login-error"` : ''
  }>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>`;
}

/** After a one-time code: go on to the overview (a same-site navigation, so the Strict cookie is sent). */
export function continuePage(assets: AssetUrls): Html {
  return html`<!doctype html>
<html lang="en">
${head('Signed in', assets, html`<meta http-equiv="refresh" content="0;url=/">`)}
<body class="login">
<main id="main">
<h1>Signed in</h1>
<p><a id="continue" href="/">Continue to the dashboard</a></p>
</main>
</body>
</html>`;
}

/** A refusal or missing page for a signed-in browser. */
export function messagePage(title: string, message: string, ctx: ViewContext, assets: AssetUrls): Html {
  return page(
    { title, nav: 'none', topics: [], live: html`<p class="error" role="alert">${message}</p>` },
    ctx,
    assets,
  );
}
