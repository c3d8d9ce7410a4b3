/** Wire types of the dashboard's API route (docs/protocol.md "Dashboard"). */
import type { z } from 'zod';
import type * as schemas from './schemas/index.js';

export type CreateLoginCodeRequest = z.input<typeof schemas.createLoginCode>;

/** `POST /v1/dashboard/login-codes`: a one-time code; open `path` on the coordinator within 5 minutes. */
export interface LoginCodeResponse {
  code: string;
  /** `/login?once=<code>`. */
  path: string;
  role: 'admin' | 'readonly';
  expiresAt: number;
}
