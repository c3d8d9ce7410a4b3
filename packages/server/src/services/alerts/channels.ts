/**
 * Sending one notification through one channel (docs/design.md "Alerts"): a webhook (a JSON POST,
 * HMAC-signed), a Slack incoming webhook (`text` and `blocks`), or email over SMTP (nodemailer). Each
 * send is bounded by a timeout and either resolves (delivered) or throws an `Error` whose message says
 * why (kept as the delivery's `error`). Secrets come from the environment variables the policy file
 * names, read at send time (a rotated secret applies to the next send).
 *
 * Webhook signature: `X-Rouse-Timestamp` is the send time (epoch ms) and `X-Rouse-Signature` is
 * `sha256=` + hex(HMAC-SHA256(secret, timestamp + "." + body)) over the exact bytes of the body. A
 * receiver recomputes it, compares in constant time, and refuses old timestamps (replays).
 */
import { createHmac } from 'node:crypto';
import type { Alert, AlertNotificationKind } from '@rouse/protocol';
import { alertBody, alertTitle } from '../../core/alerts/alert-text.js';
import type { ChannelConfig } from '../../core/policies/alert-settings.js';

/** What a channel sends: the alert as notified (its members and severity then), and why. */
export interface AlertMessage {
  alert: Alert;
  kind: AlertNotificationKind;
  /** When the notification was decided (epoch ms). */
  at: number;
}

export interface SendOptions {
  /** Longest a send may take (connect, request, answer). */
  timeoutMs: number;
  /** Where `secret_env`, `user_env` and `password_env` are looked up. */
  env: NodeJS.ProcessEnv;
  /** The signing time of a webhook (epoch ms). */
  now: number;
  /** Aborts an HTTP send under way (the coordinator stopping). */
  signal?: AbortSignal;
}

export const SIGNATURE_HEADER = 'x-rouse-signature';
export const TIMESTAMP_HEADER = 'x-rouse-timestamp';

/** `sha256=<hex>` of `timestamp.body` under `secret`. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The JSON body a webhook receives. */
export function webhookBody(m: AlertMessage): string {
  const { notifications: _history, ...alert } = m.alert;
  return JSON.stringify({
    type: 'alert',
    kind: m.kind,
    at: m.at,
    title: alertTitle(m.alert, m.kind),
    text: alertBody(m.alert, m.kind),
    alert,
  });
}

/** The Slack incoming-webhook payload: `text` (the fallback) and `blocks`. */
export function slackPayload(m: AlertMessage): { text: string; blocks: object[] } {
  const title = alertTitle(m.alert, m.kind);
  return {
    text: title,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: title.slice(0, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: alertBody(m.alert, m.kind).slice(0, 3000) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `rouse alert \`${m.alert.id}\` · ${m.kind}` }] },
    ],
  };
}

function secretOf(env: NodeJS.ProcessEnv, name: string | null, what: string): string | undefined {
  if (name === null) return undefined;
  const value = env[name];
  if (value === undefined || value === '')
    throw new Error(`${what}: the environment variable ${name} is not set`);
  return value;
}

/** Why a fetch failed, in a few words (timeouts and refused connections named as such). */
export function describeSendError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return `${err.message}: ${cause.message}${typeof code === 'string' && !cause.message.includes(code) ? ` (${code})` : ''}`;
    }
    return err.message;
  }
  return String(err);
}

async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  o: SendOptions,
): Promise<void> {
  let res: Response;
  const timeout = AbortSignal.timeout(o.timeoutMs);
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'rouse-alerts', ...headers },
      body,
      signal: o.signal === undefined ? timeout : AbortSignal.any([timeout, o.signal]),
      redirect: 'error',
    });
  } catch (err) {
    if (o.signal?.aborted === true && !timeout.aborted) throw new Error('abandoned: the coordinator stopped');
    throw new Error(describeSendError(err, o.timeoutMs));
  }
  // Read (a little of) the answer so the connection is released; keep it for the error.
  const text = await res.text().catch(() => '');
  if (!res.ok) throw new Error(`HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}

/** Send `m` through `channel`; throws an `Error` saying why it was not delivered. */
export async function sendThrough(channel: ChannelConfig, m: AlertMessage, o: SendOptions): Promise<void> {
  switch (channel.type) {
    case 'webhook': {
      const secret = secretOf(o.env, channel.secretEnv, 'webhook secret');
      const body = webhookBody(m);
      const headers: Record<string, string> = { 'x-rouse-event': 'alert', [TIMESTAMP_HEADER]: String(o.now) };
      if (secret !== undefined) headers[SIGNATURE_HEADER] = signWebhook(secret, o.now, body);
      return post(channel.url, body, headers, o);
    }
    case 'slack':
      return post(channel.webhookUrl, JSON.stringify(slackPayload(m)), {}, o);
    case 'email': {
      const user = secretOf(o.env, channel.smtp.userEnv, 'SMTP user');
      const pass = secretOf(o.env, channel.smtp.passwordEnv, 'SMTP password');
      // Loaded when first needed: a coordinator without an email channel never loads it.
      const { default: nodemailer } = await import('nodemailer');
      const transport = nodemailer.createTransport({
        host: channel.smtp.host,
        port: channel.smtp.port,
        secure: channel.smtp.secure,
        ...(user !== undefined ? { auth: { user, pass: pass ?? '' } } : {}),
        connectionTimeout: o.timeoutMs,
        greetingTimeout: o.timeoutMs,
        socketTimeout: o.timeoutMs,
      });
      try {
        await transport.sendMail({
          from: channel.from,
          to: channel.to,
          subject: alertTitle(m.alert, m.kind),
          text: alertBody(m.alert, m.kind),
          headers: { 'X-Rouse-Alert': m.alert.id, 'X-Rouse-Alert-Kind': m.kind },
        });
      } catch (err) {
        throw new Error(describeSendError(err, o.timeoutMs));
      } finally {
        transport.close();
      }
      return;
    }
  }
}
