import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CliEvent } from '../cli-flavor.js';
import { codexConfigToml, codexFlavor } from './codex-flavor.js';
import { classifyFailure, codexParser, retryNotice } from './codex-parser.js';

/** Parse a fixture: real lines of `codex exec --json` 0.171.0 (see fixtures/README.md). */
function parseFixture(name: string): CliEvent[] {
  const text = readFileSync(new URL(`./fixtures/${name}.jsonl`, import.meta.url), 'utf8');
  const parse = codexParser();
  return text
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => parse(l));
}

const types = (events: CliEvent[]) => events.map((e) => e.type);

describe('codexParser on real lines', () => {
  it('a tool call then an answer', () => {
    const events = parseFixture('tool-call');
    expect(events[0]).toMatchObject({ type: 'session', sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(types(events)).toEqual([
      'session',
      'turn_started',
      'tool_started',
      'tool_finished',
      'item_completed',
      'item_completed',
      'message',
      'usage',
      'turn_completed',
      'result',
    ]);
    const started = events.find((e) => e.type === 'tool_started');
    const finished = events.find((e) => e.type === 'tool_finished');
    expect(started).toEqual({ type: 'tool_started', id: 'item_0', name: 'command_execution' });
    expect(finished).toEqual({ type: 'tool_finished', id: 'item_0' });
    expect(
      events.filter((e) => e.type === 'item_completed').map((e) => e.type === 'item_completed' && e.kind),
    ).toEqual(['command_execution', 'agent_message']);
    expect(events.find((e) => e.type === 'usage')).toEqual({
      type: 'usage',
      inputTokens: 200,
      outputTokens: 40,
      cachedInputTokens: 0,
      cumulative: true,
    });
    expect(events.at(-1)).toEqual({ type: 'result', ok: true, message: 'wrote out.txt' });
  });

  it('a resumed thread reports the same id and the thread total', () => {
    const events = parseFixture('resume');
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ inputTokens: 200, cumulative: true });
    expect(events.at(-1)).toEqual({ type: 'result', ok: true, message: 'second answer' });
  });

  it('429 retries: rate-limited, then up when the model answers', () => {
    const deps = parseFixture('rate-limited').filter((e) => e.type === 'dependency');
    expect(deps).toEqual([
      expect.objectContaining({ state: 'rate_limited', status: 429 }),
      expect.objectContaining({ state: 'rate_limited', status: 429 }),
      expect.objectContaining({ state: 'up' }),
    ]);
  });

  it('5xx retries: down with the status, then up', () => {
    const deps = parseFixture('server-error').filter((e) => e.type === 'dependency');
    expect(deps[0]).toMatchObject({ state: 'down', status: 503 });
    expect(deps.at(-1)).toMatchObject({ state: 'up' });
  });

  it('retries run out: down on "high demand", the verdict an api error (retryable)', () => {
    const events = parseFixture('exhausted');
    expect(
      events.filter((e) => e.type === 'dependency').map((e) => e.type === 'dependency' && e.state),
    ).toEqual(['down', 'down']);
    expect(events.filter((e) => e.type === 'notice')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'result', ok: false, error: { kind: 'api' } });
    expect(parseFixture('rate-limit-exhausted').at(-1)).toMatchObject({ ok: false, error: { kind: 'api' } });
    expect(parseFixture('idle-timeout').at(-1)).toMatchObject({ ok: false, error: { kind: 'api' } });
  });

  it('a refused key: one auth verdict at the first retry notice, no dependency report', () => {
    const events = parseFixture('auth-refused');
    expect(events.some((e) => e.type === 'dependency')).toBe(false);
    const results = events.filter((e) => e.type === 'result');
    expect(results).toEqual([
      {
        type: 'result',
        ok: false,
        error: { kind: 'auth', detail: expect.stringContaining('401 Unauthorized') },
      },
    ]);
  });

  it('an interrupted run has a session and no verdict', () => {
    expect(types(parseFixture('interrupted'))).toEqual(['session', 'turn_started']);
  });

  it('ignores what is not a JSON object, and unknown types', () => {
    const parse = codexParser();
    expect(parse('')).toEqual([]);
    expect(parse('Reading additional input from stdin...')).toEqual([]);
    expect(parse('{not json')).toEqual([]);
    expect(parse('[1,2]')).toEqual([]);
    expect(parse('{"type":"something.new","x":1}')).toEqual([]);
    expect(parse('{"type":"item.completed"}')).toEqual([]);
    expect(parse('{"type":"thread.started","thread_id":""}')).toEqual([]);
  });

  it('an error item is a notice', () => {
    const parse = codexParser();
    expect(
      parse(
        '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"model metadata not found"}}',
      ),
    ).toEqual([
      { type: 'item_completed', kind: 'error' },
      { type: 'notice', detail: 'model metadata not found' },
    ]);
  });
});

describe('classification', () => {
  it('retry notices', () => {
    expect(
      retryNotice('Reconnecting... waiting for network (Connection failed: error sending request)'),
    ).toMatchObject({ state: 'down' });
    expect(
      retryNotice(
        'Reconnecting... 1/5 (unexpected status 403 Forbidden: nope, url: http://127.0.0.1:1/v1/responses)',
      ),
    ).toBeNull();
    expect(retryNotice('Something else')).toBeNull();
  });

  it('turn failures', () => {
    expect(classifyFailure('unexpected status 401 Unauthorized: bad key')).toBe('auth');
    expect(classifyFailure('Quota exceeded. Check your plan and billing details.')).toBe('budget');
    expect(classifyFailure('exceeded retry limit, last status: 429 Too Many Requests')).toBe('api');
    expect(classifyFailure('the model refused')).toBe('turn_failed');
  });
});

describe('codexFlavor', () => {
  const plan = {
    prompt: '-p',
    cwd: '/w',
    home: '/h',
    model: 'gpt-5.5',
    resumeSessionId: 'abc',
    newSessionId: null,
    maxTurns: null,
    maxBudgetUsd: null,
    extraArgs: ['-c', 'x=1'],
    extraEnv: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', K: 'v' },
  };

  it('command: exec --json, options, then resume <id>, then the prompt after --', () => {
    expect(codexFlavor.command(plan)).toEqual({
      args: [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '--cd',
        '/w',
        '--model',
        'gpt-5.5',
        '-c',
        'x=1',
        'resume',
        'abc',
        '--',
        '-p',
      ],
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', K: 'v', CODEX_HOME: '/h' },
    });
    const fresh = codexFlavor.command({ ...plan, resumeSessionId: null, model: null, extraArgs: [] }).args;
    expect(fresh).toEqual(['exec', '--json', '--skip-git-repo-check', '--cd', '/w', '--', '-p']);
    expect(fresh.join(' ')).not.toMatch(/--last|--ephemeral/);
  });

  it('config.toml: a provider only when OPENAI_BASE_URL is given', () => {
    const withUrl = codexConfigToml(plan);
    expect(withUrl).toContain('model_provider = "rouse"');
    expect(withUrl).toContain('base_url = "http://127.0.0.1:9/v1"');
    expect(withUrl).toContain('wire_api = "responses"');
    expect(withUrl).toContain('approval_policy = "never"');
    const without = codexConfigToml({ extraEnv: {} });
    expect(without).not.toContain('model_provider');
    expect(without).toContain('approval_policy = "never"');
  });
});
