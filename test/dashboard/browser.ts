/**
 * A real browser for the dashboard tests: Debian's `chromium`, driven by playwright-core. A machine
 * without it FAILS these tests (never skips them), with the command that installs it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

export const SCREENSHOTS = fileURLToPath(new URL('../../test-results/dashboard/', import.meta.url));

/** The chromium on PATH, or an error saying how to install it. */
export function chromiumPath(): string {
  let path = '';
  try {
    path = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    path = '';
  }
  if (path === '') {
    throw new Error(
      'the dashboard tests need a real browser and `chromium` is not on PATH: install it with ' +
        '`apt-get update && apt-get install -y --no-install-recommends chromium` (as root; .ci/run does this), then run the tests again',
    );
  }
  return path;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * The serious and critical violations axe-core finds on the page (the page's context must bypass
 * its Content-Security-Policy, which refuses injected scripts).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations;
  })) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      ...v,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary ?? '' })),
    }));
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * The few browser globals the tests' page callbacks touch: the tests are typechecked without the DOM
 * library (it clashes with Node's types), so a callback casts `globalThis` to this.
 */
export interface PageGlobals {
  document: {
    body: { dataset: Record<string, string | undefined> };
    activeElement: { id: string } | null;
    querySelector(selector: string): { textContent: string | null } | null;
  };
  localStorage: Record<string, string>;
  sessionStorage: Record<string, string>;
  notReloaded?: boolean;
}
