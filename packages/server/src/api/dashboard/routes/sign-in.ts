/** Signing in (a one-time login link or a pasted token) and out, the session probe and the live stream. */
import { continuePage, loginPage } from '@rouse/dashboard';
import { type Form, one } from '../form.js';
import { checkOrigin, checkWrite, clearSessionCookie, setSessionCookie } from '../session.js';
import type { Site } from '../site.js';

export function registerSignInRoutes(site: Site): void {
  const { scope, coordinator, urls, streams, requireSession, sendHtml } = site;

  // ---- sign in and out ----
  scope.get('/login', async (request, reply) => {
    const once = (request.query as Record<string, unknown>).once;
    if (typeof once === 'string' && once !== '') {
      const opened = await coordinator.dashboard.openSession({ code: once });
      if (opened === null) {
        return sendHtml(
          reply,
          loginPage(
            {
              error:
                'That login link was used already or has expired. Ask for a new one (rouse dashboard), or paste a token.',
            },
            urls,
          ),
          401,
        );
      }
      setSessionCookie(request, reply, opened.sessionId);
      return sendHtml(reply, continuePage(urls));
    }
    const signedOut = (request.query as Record<string, unknown>).signed_out !== undefined;
    return sendHtml(reply, loginPage(signedOut ? { message: 'Signed out.' } : {}, urls));
  });

  scope.post('/login', async (request, reply) => {
    checkOrigin(request);
    const token = one((request.body ?? {}) as Form, 'token') ?? '';
    const opened = token === '' ? null : await coordinator.dashboard.openSession({ token });
    if (opened === null) {
      return sendHtml(
        reply,
        loginPage({ error: 'That token was not accepted: paste the admin or the read-only token.' }, urls),
        401,
      );
    }
    setSessionCookie(request, reply, opened.sessionId);
    return reply.code(303).redirect('/');
  });

  scope.post('/logout', async (request, reply) => {
    const session = await requireSession(request);
    checkWrite(request, session, one((request.body ?? {}) as Form, '_csrf'), false);
    await coordinator.dashboard.endSession(session.id);
    clearSessionCookie(request, reply);
    // Redirected: a reload of the page that follows does not post the form again.
    return reply.code(303).header('cache-control', 'no-store').redirect('/login?signed_out');
  });

  /** What the page's script asks when its stream is refused: is the session still there? */
  scope.get('/session', async (request) => {
    const s = await requireSession(request);
    return { role: s.role };
  });

  scope.get('/events', async (request, reply) => {
    const session = await requireSession(request);
    // Signed out (here or in another tab) or expired: the stream ends, and the page's reconnection
    // is refused, which sends it to the sign-in page.
    streams.serve(
      request,
      reply,
      async () => (await coordinator.dashboard.resumeSession(session.id)) !== null,
    );
  });
}
