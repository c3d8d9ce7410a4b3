/**
 * The rules of the house (docs/ARCHITECTURE.md), checked on the source: no import cycles between
 * files, not even of types; core has no I/O and no wall clock of its own; core and the store import
 * nothing above them; library code never writes with `console.*`; the SDK depends on the protocol
 * and Node only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The source files of every package (no tests, test helpers or declarations), relative to the root. */
function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'test-support') walk(path);
      } else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
        out.push(path);
    }
  };
  for (const pkg of readdirSync(join(root, 'packages'))) walk(join('packages', pkg, 'src'));
  return out.sort();
}

/** Comments out of the way, so that an `import` in a doc example is not read as one. */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The specifiers of a file's static imports and re-exports (`import type` included). */
function importSpecifiers(source: string): string[] {
  const out: string[] = [];
  const re =
    /(?:^|\n)\s*(?:import|export)\s[^'";]*?\sfrom\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;
  for (const m of code(source).matchAll(re)) out.push((m[1] ?? m[2])!);
  return out;
}

/** The files of `files` a file imports (relative specifiers, `.js` written for `.ts`). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const spec of importSpecifiers(readFileSync(join(root, file), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const base = normalize(join(dirname(file), spec)).replace(/\.js$/, '');
      const target = [`${base}.ts`, join(base, 'index.ts')].find((f) => known.has(f));
      if (target !== undefined) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each sorted. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

const files = sourceFiles();

describe('the rules of the house', () => {
  it('finds a cycle where there is one (the check itself)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(
      importSpecifiers(
        `/** import { x } from './doc.js' */\nimport type { A } from './a.js';\nexport * from './b.js';\nimport './c.js';`,
      ),
    ).toEqual(['./a.js', './b.js', './c.js']);
  });

  it('no files import each other in a circle, not even for types', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(cycles(importGraph(files))).toEqual([]);
  });

  it('core has no I/O and reads no wall clock of its own', () => {
    const core = files.filter((f) => f.startsWith(join('packages', 'server', 'src', 'core')));
    expect(core.length).toBeGreaterThan(20);
    const offending = core.filter((f) => {
      const source = code(readFileSync(join(root, f), 'utf8'));
      return /Date\.now\(\)/.test(source) || importSpecifiers(source).some((s) => s.startsWith('node:'));
    });
    expect(offending).toEqual([]);
  });

  it('arrows point down: core imports no store, service or API code; the store no service or API code', () => {
    const server = join('packages', 'server', 'src');
    const graph = importGraph(files);
    const upward = (from: string, banned: string[]) =>
      [...graph]
        .filter(([f]) => f.startsWith(join(server, from)))
        .flatMap(([f, targets]) =>
          targets.filter((t) => banned.some((b) => t.startsWith(join(server, b)))).map((t) => `${f} -> ${t}`),
        );
    expect(upward('core', ['store', 'services', 'api', 'cli'])).toEqual([]);
    expect(upward('store', ['services', 'api', 'cli'])).toEqual([]);
  });

  it('library code never writes with console.*', () => {
    const offending = files.filter((f) =>
      /\bconsole\.(log|info|warn|error|debug|trace)\(/.test(code(readFileSync(join(root, f), 'utf8'))),
    );
    expect(offending.map((f) => relative(root, join(root, f)))).toEqual([]);
  });

  it('the SDK imports only the protocol and Node', () => {
    const sdk = files.filter((f) => f.startsWith(join('packages', 'sdk', 'src')));
    const foreign = sdk.flatMap((f) =>
      importSpecifiers(readFileSync(join(root, f), 'utf8'))
        .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && s !== '@rouse/protocol')
        .map((s) => `${f}: ${s}`),
    );
    expect(foreign).toEqual([]);
  });
});
