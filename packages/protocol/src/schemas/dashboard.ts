/** Schemas of the dashboard's API route (docs/protocol.md "Dashboard"). */
import { z } from 'zod';

/** `POST /v1/dashboard/login-codes`: the role the code's session gets. @default admin */
export const createLoginCode = z
  .object({ role: z.enum(['admin', 'readonly'], { message: 'admin or readonly' }).optional() })
  .strict();
