/**
 * How the user runs `rouse` again from their shell, for hints such as the `rouse serve` banner's "try"
 * line: a clone has no `rouse` on PATH, only `npx rouse`.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative } from 'node:path';

export interface InvocationInput {
  env: Record<string, string | undefined>;
  cwd: string;
  /** The script node runs (`process.argv[1]`): the bin, or a symlink to it. */
  script: string | undefined;
  /** The executable `name` on `path` (a PATH value), or null. @default a search of the directories */
  findOnPath?: (name: string, path: string) => string | null;
  /** The file a path names, symlinks resolved; null if there is none. @default fs.realpathSync */
  realpath?: (path: string) => string | null;
}

/**
 * The command that runs this CLI from the user's shell:
 * - `npx rouse` when started by npm (npx, npm exec, npm run): npm's PATH is not the user's, and npx finds
 *   the same local bin npm did;
 * - `rouse` when that name on the user's PATH is this CLI;
 * - `npx rouse` when a `node_modules/.bin/rouse` in the working directory or above is this CLI (a clone,
 *   or a project that depends on it);
 * - else `node <script>`.
 */
export function rouseCommand(input: InvocationInput): string {
  const { env, cwd, script } = input;
  if (script === undefined) return 'rouse';
  if (env.npm_command) return 'npx rouse';
  const findOnPath = input.findOnPath ?? findExecutable;
  const realpath = input.realpath ?? realpathOrNull;
  const self = realpath(script);
  if (self === null) return 'rouse';
  const onPath = findOnPath('rouse', env.PATH ?? '');
  if (onPath !== null && realpath(onPath) === self) return 'rouse';
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (realpath(join(dir, 'node_modules', '.bin', 'rouse')) === self) return 'npx rouse';
    if (dirname(dir) === dir) break;
  }
  const rel = relative(cwd, script);
  return `node ${shellQuote(rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : script)}`;
}

/** `word` as one shell word: as it is when that is safe, else in single quotes. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

function findExecutable(name: string, path: string): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
