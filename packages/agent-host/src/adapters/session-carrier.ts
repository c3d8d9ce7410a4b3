/**
 * A CLI session's files packed into one blob and back (pure), so a retry on another host can restore
 * the transcript before it resumes. Format: the line `rouse-session/1`, one JSON line listing
 * `[{path, bytes}]`, then the files' bytes one after another. Paths are relative, without `..`.
 */

export interface SessionFile {
  path: string;
  content: Buffer;
}

export const SESSION_CONTENT_TYPE = 'application/x-rouse-session';
const MAGIC = 'rouse-session/1\n';

export class SessionCarrierError extends Error {}

function checkPath(path: unknown): string {
  if (
    typeof path !== 'string' ||
    path === '' ||
    path.startsWith('/') ||
    path.includes('\0') ||
    path.split(/[\\/]/).includes('..')
  ) {
    throw new SessionCarrierError(
      `a session file path must be relative and stay inside the home (got ${JSON.stringify(path)})`,
    );
  }
  return path;
}

export function packSession(files: readonly SessionFile[]): Buffer {
  const manifest = files.map((f) => ({ path: checkPath(f.path), bytes: f.content.length }));
  return Buffer.concat([
    Buffer.from(`${MAGIC}${JSON.stringify(manifest)}\n`, 'utf8'),
    ...files.map((f) => f.content),
  ]);
}

export function unpackSession(blob: Buffer): SessionFile[] {
  if (blob.subarray(0, MAGIC.length).toString('utf8') !== MAGIC) {
    throw new SessionCarrierError('not a packed session (no rouse-session/1 header)');
  }
  const nl = blob.indexOf(10, MAGIC.length);
  if (nl === -1) throw new SessionCarrierError('a packed session without its file list');
  let manifest: unknown;
  try {
    manifest = JSON.parse(blob.subarray(MAGIC.length, nl).toString('utf8'));
  } catch {
    throw new SessionCarrierError('a packed session with a broken file list');
  }
  if (!Array.isArray(manifest)) throw new SessionCarrierError('a packed session with a broken file list');
  const out: SessionFile[] = [];
  let at = nl + 1;
  for (const entry of manifest as { path?: unknown; bytes?: unknown }[]) {
    const bytes = entry?.bytes;
    if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 0 || at + bytes > blob.length) {
      throw new SessionCarrierError('a packed session shorter than its file list says');
    }
    out.push({ path: checkPath(entry.path), content: Buffer.from(blob.subarray(at, at + bytes)) });
    at += bytes;
  }
  if (at !== blob.length) throw new SessionCarrierError('a packed session longer than its file list says');
  return out;
}
