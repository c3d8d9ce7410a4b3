/**
 * Whether a program can be started, found as `spawn` finds it: a name with a slash is a path (relative
 * to the working directory the program starts in), any other name is looked up on the `PATH` of the
 * environment it starts with (`/usr/bin:/bin` when that has none). `rouse agent` checks its CLI (or
 * the shell adapter's `--bin`) before it registers, and the adapters check again when a start fails,
 * to tell a program that is gone from any other failure to start.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** Where `file` would run from, or why it cannot run. */
export type ExecutableLookup = { found: true; path: string } | { found: false; why: string };

/** The search path `spawn` uses when the child's environment has no `PATH`. */
const DEFAULT_PATH = '/usr/bin:/bin';

/** Look `file` up as `spawn` would, for a child started in `cwd` with `env`. */
export function findExecutable(file: string, env: NodeJS.ProcessEnv, cwd: string): ExecutableLookup {
  if (file.includes('/')) {
    const path = isAbsolute(file) ? file : resolve(cwd, file);
    const why = unrunnable(path);
    return why === null ? { found: true, path } : { found: false, why: `${path} ${why}` };
  }
  const searched = env.PATH ?? DEFAULT_PATH;
  let notExecutable: string | null = null;
  for (const dir of searched.split(delimiter)) {
    const path = join(dir === '' ? cwd : resolve(cwd, dir), file);
    const why = unrunnable(path);
    if (why === null) return { found: true, path };
    if (why !== 'does not exist' && notExecutable === null) notExecutable = `${path} ${why}`;
  }
  return {
    found: false,
    why:
      notExecutable ??
      `no "${file}" on PATH (${searched.length > 200 ? `${searched.slice(0, 200)}…` : searched})`,
  };
}

/** Why the file at `path` cannot be executed, or null when it can. */
function unrunnable(path: string): string | null {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be read (${code})`;
  }
  if (!isFile) return 'is not a file';
  try {
    accessSync(path, constants.X_OK);
    return null;
  } catch {
    return 'is not executable';
  }
}
