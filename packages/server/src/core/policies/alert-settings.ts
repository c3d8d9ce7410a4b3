/**
 * Alert channels and alert timing from the policy file (docs/design.md §6.7), resolved: channels keyed by
 * name (camelCase, defaults filled), grouping and repetition in ms.
 */
import { ALERT_DEFAULTS } from './policy-defaults.js';
import type { AlertsInput, ChannelInput } from './policy-schema.js';

/** Where alerts go. Secrets are never in the file: `*Env` name the environment variables holding them. */
export type ChannelConfig =
  | { type: 'webhook'; url: string; secretEnv: string | null }
  | { type: 'slack'; webhookUrl: string }
  | {
      type: 'email';
      smtp: {
        host: string;
        port: number;
        /** TLS from the start; @default true on port 465, else false (STARTTLS when offered) */
        secure: boolean;
        userEnv: string | null;
        passwordEnv: string | null;
      };
      from: string;
      to: string[];
    };

export interface AlertTiming {
  groupWaitMs: number;
  groupIntervalMs: number;
  repeatIntervalMs: number;
  /** null = never escalate. */
  escalateAfterMs: number | null;
}

export function resolveChannel(c: ChannelInput): ChannelConfig {
  switch (c.type) {
    case 'webhook':
      return { type: 'webhook', url: c.url, secretEnv: c.secret_env ?? null };
    case 'slack':
      return { type: 'slack', webhookUrl: c.webhook_url };
    case 'email':
      return {
        type: 'email',
        smtp: {
          host: c.smtp.host,
          port: c.smtp.port,
          secure: c.smtp.secure ?? c.smtp.port === 465,
          userEnv: c.smtp.user_env ?? null,
          passwordEnv: c.smtp.password_env ?? null,
        },
        from: c.from,
        to: [...c.to],
      };
  }
}

export function resolveAlerts(a: AlertsInput = {}): AlertTiming {
  return {
    groupWaitMs: a.group_wait ?? ALERT_DEFAULTS.groupWaitMs,
    groupIntervalMs: a.group_interval ?? ALERT_DEFAULTS.groupIntervalMs,
    repeatIntervalMs: a.repeat_interval ?? ALERT_DEFAULTS.repeatIntervalMs,
    escalateAfterMs: a.escalate_after === undefined ? ALERT_DEFAULTS.escalateAfterMs : a.escalate_after,
  };
}
