#!/usr/bin/env node
// Copies the server's non-TypeScript runtime assets (SQL migrations, and the SQLite checkpoint
// thread's module, which Node loads by path) from src/ to dist/, keeping
// their paths, so modules can read them relative to themselves (new URL('./x.sql', import.meta.url)),
// and the dashboard's static assets (packages/dashboard/assets) into dist/api/dashboard/assets, where
// the coordinator serves them from.
// Run after `tsc -b` (the root `build` script does).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
const ASSET = /\.(sql|mjs)$/;

let copied = 0;
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !ASSET.test(entry.name)) continue;
  const from = join(entry.parentPath ?? entry.path, entry.name);
  const to = join(dist, relative(src, from));
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
  copied += 1;
}
const dashboardAssets = join(root, '..', 'dashboard', 'assets');
const dashboardTarget = join(dist, 'api', 'dashboard', 'assets');
mkdirSync(dashboardTarget, { recursive: true });
for (const name of readdirSync(dashboardAssets)) {
  copyFileSync(join(dashboardAssets, name), join(dashboardTarget, name));
  copied += 1;
}
process.stdout.write(`copy-assets: ${copied} file(s) to ${relative(process.cwd(), dist) || dist}\n`);
