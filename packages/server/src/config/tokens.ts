/**
 * The coordinator's static bearer tokens (docs/protocol.md "Auth"): given explicitly (the CLI passes
 * `ROUSE_ADMIN_TOKEN` / `ROUSE_AGENT_TOKEN` values in; this module never reads the environment), else
 * read from `<dataDir>/<name>.token`, else generated there with file mode 0600.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { AGENT_TOKEN_PREFIX } from '../services/auth.js';

export type TokenName = 'admin' | 'agent' | 'readonly';

export const TOKEN_PREFIXES: Readonly<Record<TokenName, string>> = {
  admin: 'rsk_admin_',
  agent: 'rsk_enroll_',
  readonly: 'rsk_read_',
};

export interface LoadedToken {
  token: string;
  /** The file it lives in, or null when it was given explicitly. */
  file: string | null;
  /** True when this call created the file. */
  generated: boolean;
}

/** A fresh token: the prefix and 32 random bytes, base64url. */
export function generateToken(name: TokenName): string {
  return TOKEN_PREFIXES[name] + randomBytes(32).toString('base64url');
}

export function tokenFile(dataDir: string, name: TokenName): string {
  return join(dataDir, `${name}.token`);
}

/** Use `explicit`, else the token file, else create the file (mode 0600, never overwritten). */
export async function loadToken(dataDir: string, name: TokenName, explicit?: string): Promise<LoadedToken> {
  if (explicit !== undefined) {
    if (!/^\S{16,}$/.test(explicit)) {
      throw new ValidationError(`${name}Token`, 'must be at least 16 characters without whitespace');
    }
    if (explicit.startsWith(AGENT_TOKEN_PREFIX)) {
      throw new ValidationError(
        `${name}Token`,
        `must not start with ${AGENT_TOKEN_PREFIX} (reserved for agent tokens)`,
      );
    }
    return { token: explicit, file: null, generated: false };
  }
  const file = tokenFile(dataDir, name);
  const existing = await readExisting(file);
  if (existing !== null) return { token: existing, file, generated: false };
  const token = generateToken(name);
  try {
    // 'wx': two servers starting on one data directory never overwrite each other's token.
    await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      const raced = await readExisting(file);
      if (raced !== null) return { token: raced, file, generated: false };
    }
    throw err;
  }
  await chmod(file, 0o600); // the umask may have narrowed it further, never widened; make it exact
  return { token, file, generated: true };
}

async function readExisting(file: string): Promise<string | null> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    if (text === '') throw new Error(`token file ${file} is empty; delete it to generate a new token`);
    return text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
