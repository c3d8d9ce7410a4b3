/** A policy file for a coordinator under test (`rouse serve --policies <file>`), in a temp directory. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp-dir.js';

export function writePolicyFile(yaml: string): string {
  const file = join(tempDir('rouse-policy-'), 'rouse.yaml');
  writeFileSync(file, yaml);
  return file;
}
