/**
 * The Claude Code flavor on lines the pinned CLI (2.1.197) really printed, against the fake Messages
 * API of test/harness/fake-anthropic.ts (fixtures/*.jsonl, one file per scenario).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliEvent, CliRunPlan } from '../cli-flavor.js';
import { claudeFlavor, claudeProjectDirName } from './claude-flavor.js';

const fixture = (name: string): CliEvent[] => {
  const parse = claudeFlavor.parser();
  const text = readFileSync(new URL(`./fixtures/${name}.jsonl`, import.meta.url), 'utf8');
  return text.split('\n').flatMap((l) => parse(l));
};
const of = <T extends CliEvent['type']>(events: CliEvent[], type: T) =>
  events.filter((e): e is Extract<CliEvent, { type: T }> => e.type === type);
const SID = '0b9f7c9e-6a43-4f7e-9d5c-4a1f3e2b9c01';

describe('claude stream-json parser', () => {
  it('a tool call then an answer: session, tool paired with its result, messages, usage once per message, result', () => {
    const ev = fixture('tool');
    expect(ev[0]).toEqual({ type: 'session', sessionId: SID });
    expect(of(ev, 'session')).toHaveLength(1);
    expect(of(ev, 'tool_started')).toEqual([{ type: 'tool_started', id: 'toolu_fake_1', name: 'Bash' }]);
    expect(of(ev, 'tool_finished')).toEqual([{ type: 'tool_finished', id: 'toolu_fake_1' }]);
    expect(ev.findIndex((e) => e.type === 'tool_finished')).toBeGreaterThan(
      ev.findIndex((e) => e.type === 'tool_started'),
    );
    expect(of(ev, 'message').map((m) => m.text)).toEqual(['Writing.', 'Wrote out.txt.']);
    // The fake sent 300 in / 30 out, then 400 in (+50 cache reads) / 10 out. The assistant lines
    // carry message_start's usage (output 1), counted once per message id although the first
    // message printed two lines; the result line adds what they did not show, and the cost.
    const usage = of(ev, 'usage');
    expect(usage.every((u) => !u.cumulative)).toBe(true);
    expect(usage.reduce((s, u) => s + u.inputTokens, 0)).toBe(750);
    expect(usage.reduce((s, u) => s + u.outputTokens, 0)).toBe(40);
    expect(usage.reduce((s, u) => s + (u.cachedInputTokens ?? 0), 0)).toBe(50);
    expect(usage.at(-1)?.costUsd).toBeGreaterThan(0);
    const result = ev.at(-1);
    expect(result).toMatchObject({ type: 'result', ok: true, message: 'Wrote out.txt.', numTurns: 2 });
    expect(of(ev, 'item_completed').length).toBeGreaterThanOrEqual(4);
  });

  it('429 retries are rate_limited with the delay, then up when the model answers', () => {
    const dep = of(fixture('429'), 'dependency');
    expect(dep.map((d) => d.state)).toEqual(['rate_limited', 'rate_limited', 'up']);
    expect(dep[0]).toMatchObject({ status: 429, retryAfterMs: 1000 });
  });

  it('529 overloaded is down; 500 until the retries run out is down, then a failed api result', () => {
    expect(of(fixture('529'), 'dependency').map((d) => d.state)).toEqual(['down', 'down', 'up']);
    const ev = fixture('500x');
    expect(of(ev, 'dependency')).toMatchObject([{ state: 'down', status: 500 }]);
    expect(of(ev, 'message')).toEqual([]); // the CLI's synthetic "API Error" text is not the model's
    expect(ev.at(-1)).toMatchObject({ type: 'result', ok: false, error: { kind: 'api' } });
  });

  it('401 is retried by the CLI but is no outage: an auth verdict at its first retry notice, and at the end', () => {
    const ev = fixture('401');
    expect(of(ev, 'dependency')).toEqual([]);
    const results = of(ev, 'result');
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({
      ok: false,
      error: { kind: 'auth', detail: expect.stringContaining('401') },
    });
    expect(ev.indexOf(results[0]!)).toBe(2); // right after the init line
    expect(ev.at(-1)).toMatchObject({ type: 'result', ok: false, error: { kind: 'auth' } });
  });

  it('SIGINT while streaming or during a tool: interrupted (the tool counts as finished)', () => {
    expect(fixture('hang').at(-1)).toMatchObject({ ok: false, error: { kind: 'interrupted' } });
    const ev = fixture('toolint');
    expect(of(ev, 'tool_finished')).toHaveLength(1);
    expect(ev.at(-1)).toMatchObject({ ok: false, error: { kind: 'interrupted' } });
  });

  it('max turns and max budget are budget failures; the budget run still reports its usage', () => {
    expect(fixture('turns').at(-1)).toMatchObject({ ok: false, error: { kind: 'budget' } });
    const ev = fixture('budget');
    expect(ev.at(-1)).toMatchObject({
      ok: false,
      error: { kind: 'budget', detail: expect.stringContaining('budget') },
    });
    expect(of(ev, 'usage').reduce((s, u) => s + u.inputTokens, 0)).toBe(5000);
    expect(of(ev, 'usage').reduce((s, u) => s + u.outputTokens, 0)).toBe(100);
  });

  it('a resume whose transcript is missing: no init line, so no session event; a retryable failure', () => {
    const ev = fixture('resume2');
    expect(of(ev, 'session')).toEqual([]);
    expect(ev.at(-1)).toMatchObject({
      ok: false,
      error: { kind: 'turn_failed', detail: expect.stringContaining('No conversation found') },
    });
  });

  it('lines that are not JSON are notices; blank lines nothing', () => {
    const parse = claudeFlavor.parser();
    expect(parse('')).toEqual([]);
    expect(parse('warning: something')).toEqual([{ type: 'notice', detail: 'warning: something' }]);
  });
});

describe('claude command and home', () => {
  const plan = (over: Partial<CliRunPlan> = {}): CliRunPlan => ({
    prompt: '--a prompt',
    cwd: '/w',
    home: '/h',
    model: null,
    resumeSessionId: null,
    newSessionId: SID,
    maxTurns: null,
    maxBudgetUsd: null,
    extraArgs: [],
    extraEnv: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' },
    ...over,
  });

  it('starts with the assigned session id, resumes by id, never --continue; the prompt after --', () => {
    const { args, env } = claudeFlavor.command(plan({ maxTurns: 3, maxBudgetUsd: 0.5, model: 'm' }));
    expect(args.slice(0, 4)).toEqual(['-p', '--output-format', 'stream-json', '--verbose']);
    expect(args).toEqual(
      expect.arrayContaining(['--session-id', SID, '--max-turns', '3', '--max-budget-usd', '0.5']),
    );
    expect(args.slice(-2)).toEqual(['--', '--a prompt']);
    expect(env).toMatchObject({
      HOME: '/h/home',
      CLAUDE_CONFIG_DIR: '/h/config',
      CLAUDE_CODE_TMPDIR: '/h/tmp',
      DISABLE_TELEMETRY: '1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:1',
    });
    const resumed = claudeFlavor.command(plan({ resumeSessionId: SID, newSessionId: null })).args;
    expect(resumed).toEqual(expect.arrayContaining(['--resume', SID]));
    expect(resumed).not.toContain('--session-id');
    expect(resumed.some((a) => a === '--continue' || a === '-c')).toBe(false);
    expect(claudeFlavor.assignSessionId()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('permissions: a default allow-list unless the user chose their own', () => {
    expect(claudeFlavor.command(plan()).args.some((a) => a.startsWith('--allowedTools='))).toBe(true);
    const own = claudeFlavor.command(plan({ extraArgs: ['--permission-mode', 'acceptEdits'] })).args;
    expect(own.some((a) => a.startsWith('--allowedTools='))).toBe(false);
  });

  it('project folder names as the CLI makes them', () => {
    expect(claudeProjectDirName('/tmp/cprobe/r7/cwd/a_b.c d')).toBe('-tmp-cprobe-r7-cwd-a-b-c-d');
    const long = claudeProjectDirName(`/${'x'.repeat(300)}`);
    expect(long).toMatch(/^-x{199}-[0-9a-z]+$/);
  });

  describe('session files', () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });
    it('are found under the old cwd and restored under the new cwd of another home', async () => {
      const root = mkdtempSync(join(tmpdir(), 'rouse-claude-flavor-'));
      dirs.push(root);
      const home1 = join(root, 'h1');
      const old = join(home1, 'config', 'projects', claudeProjectDirName('/old/cwd'));
      mkdirSync(join(old, SID, 'tool-results'), { recursive: true });
      writeFileSync(join(old, `${SID}.jsonl`), '{"a":1}\n');
      writeFileSync(join(old, SID, 'tool-results', 'x.txt'), 'big');
      writeFileSync(join(old, 'other.jsonl'), 'no');
      const files = await claudeFlavor.sessionFiles(home1, SID, '/old/cwd');
      expect(files.sort()).toEqual([
        join('config', 'projects', '-old-cwd', `${SID}.jsonl`),
        join('config', 'projects', '-old-cwd', SID, 'tool-results', 'x.txt'),
      ]);
      const home2 = join(root, 'h2');
      const cwd2 = join(root, 'new cwd');
      mkdirSync(cwd2);
      const carried = files.map((p) => ({ path: p, content: readFileSync(join(home1, p)) }));
      carried.push({ path: '../../etc/evil', content: Buffer.from('x') });
      await claudeFlavor.restoreSession(home2, SID, cwd2, carried);
      const target = join(home2, 'config', 'projects', claudeProjectDirName(cwd2));
      expect(readFileSync(join(target, `${SID}.jsonl`), 'utf8')).toBe('{"a":1}\n');
      expect(readFileSync(join(target, SID, 'tool-results', 'x.txt'), 'utf8')).toBe('big');
      expect(await claudeFlavor.sessionFiles(home2, SID, cwd2)).toHaveLength(2);
      expect(await claudeFlavor.sessionFiles(home2, 'nope', cwd2)).toEqual([]);
    });
  });
});
