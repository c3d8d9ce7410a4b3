import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../test-support/api-harness.js';
import { jsonDeeperThan } from './json-depth.js';
import { DEFAULT_API_LIMITS } from './limits.js';

const MAX = DEFAULT_API_LIMITS.jsonMaxDepth;

/** A JSON value exactly `depth` levels deep (objects and arrays in turn; 0 is a number). */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = depth; level >= 1; level--) value = level % 2 === 1 ? { k: value } : [value, 'x'];
  return value;
}

/** How deeply `value` nests (test side, recursive: fine for the depths used here). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('jsonDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings or escaped quotes', () => {
    expect(jsonDeeperThan('1', 0)).toBe(false);
    expect(jsonDeeperThan('{}', 0)).toBe(true);
    expect(jsonDeeperThan('{}', 1)).toBe(false);
    expect(jsonDeeperThan('{"a":[{}]}', 2)).toBe(true);
    expect(jsonDeeperThan('{"a":[{}]}', 3)).toBe(false);
    expect(jsonDeeperThan('[{}, {}, [], {"b": []}]', 3)).toBe(false);
    expect(jsonDeeperThan('{"a":"[[[[{{{{"}', 1)).toBe(false);
    expect(jsonDeeperThan('{"a":"\\"[[[[\\\\"}', 1)).toBe(false);
    expect(jsonDeeperThan('{"a":"\\\\","b":[[]]}', 2)).toBe(true);
    expect(jsonDeeperThan('['.repeat(100_000), 64)).toBe(true);
  });

  it('agrees with the depth of the parsed value', () => {
    for (const d of [0, 1, 2, 5, 63, 64, 65]) {
      const text = JSON.stringify({ x: nested(d) });
      expect(depthOf(JSON.parse(text))).toBe(d + 1);
      expect(jsonDeeperThan(text, d + 1)).toBe(false);
      expect(jsonDeeperThan(text, d)).toBe(true);
    }
  });
});

describe(`JSON bodies nest at most ${MAX} levels`, () => {
  let h: Harness;
  let agent: TestAgent;

  beforeAll(async () => {
    h = await createHarness();
    agent = await h.register(['held']);
  });
  afterAll(async () => {
    await h.close();
  });

  /**
   * Each free-form field, as a request whose body puts `value` in that field. `run` sends it with
   * the state it needs (a running task for the holder writes).
   */
  const fields: {
    field: string;
    body: (value: unknown, version: number) => Record<string, unknown>;
    send: (body: Record<string, unknown>) => Promise<{ statusCode: number; body: string }>;
  }[] = [
    {
      field: 'create payload',
      body: (v) => ({ type: 't', payload: v }),
      send: (body) => h.request('POST', '/v1/tasks', { body }),
    },
    {
      field: 'batch create payload',
      body: (v) => ({ tasks: [{ type: 't', payload: v }] }),
      send: (body) => h.request('POST', '/v1/tasks/batch', { body }),
    },
    ...(['state', 'session'] as const).map((key) => ({
      field: `checkpoint ${key}`,
      body: (v: unknown, version: number) => ({ version, [key]: v }),
      send: async (body: Record<string, unknown>) => {
        const t = await h.runningTask(agent, { type: 'held' });
        return h.request('PUT', `/v1/tasks/${t.id}/checkpoint`, {
          token: agent.token,
          body: { ...body, version: t.version },
        });
      },
    })),
    {
      field: 'complete result',
      body: (v, version) => ({ version, result: v }),
      send: async (body) => {
        const t = await h.runningTask(agent, { type: 'held' });
        return h.request('POST', `/v1/tasks/${t.id}/complete`, {
          token: agent.token,
          body: { ...body, version: t.version },
        });
      },
    },
    {
      field: 'fail error.details',
      body: (v, version) => ({ version, error: { code: 'e', message: 'm', details: { d: v } } }),
      send: async (body) => {
        const t = await h.runningTask(agent, { type: 'held' });
        return h.request('POST', `/v1/tasks/${t.id}/fail`, {
          token: agent.token,
          body: { ...body, version: t.version },
        });
      },
    },
    {
      field: 'claim complete[].result',
      body: (v) => ({ types: ['none'], complete: [{ taskId: 'tsk_x', version: 1, result: v }] }),
      send: (body) => h.request('POST', `/v1/agents/${agent.agentId}/claim`, { token: agent.token, body }),
    },
  ];

  /** A body of `total` levels with the nesting inside the field. */
  function bodyOfDepth(f: (typeof fields)[number], total: number): Record<string, unknown> {
    const around = depthOf(f.body(0, 1));
    const body = f.body(nested(total - around), 1);
    expect(depthOf(body)).toBe(total);
    return body;
  }

  for (const f of fields) {
    it(`${f.field}: ${MAX} levels accepted, ${MAX + 1} refused naming maxDepth, 5000 refused`, async () => {
      const atLimit = await f.send(bodyOfDepth(f, MAX));
      expect(atLimit.statusCode, atLimit.body).toBeLessThan(300);

      const over = await f.send(bodyOfDepth(f, MAX + 1));
      expect(over.statusCode, over.body).toBe(400);
      const error = JSON.parse(over.body).error;
      expect(error).toMatchObject({ code: 'validation_failed', details: { maxDepth: MAX } });
      expect(error.message).toContain(`${MAX} levels (maxDepth)`);

      // A body of a few tens of kilobytes, 5000 levels deep, in this field.
      const hole = JSON.stringify(f.body('HOLE', 1));
      const deep = hole.replace('"HOLE"', `${'['.repeat(5000)}${']'.repeat(5000)}`);
      expect(deep.length).toBeLessThan(30_000);
      const refused = await h.request(...deepRequest(f.field, deep));
      expect(refused.statusCode, refused.body).toBe(400);
      expect(JSON.parse(refused.body).error.details.maxDepth).toBe(MAX);

      expect((await h.request('GET', '/healthz')).statusCode).toBe(200);
    });
  }

  /** The raw deep body goes where its field's request goes (the id need not exist: depth is checked first). */
  function deepRequest(field: string, payload: string): Parameters<Harness['request']> {
    const url: Record<string, string> = {
      'create payload': '/v1/tasks',
      'batch create payload': '/v1/tasks/batch',
      'checkpoint state': '/v1/tasks/tsk_x/checkpoint',
      'checkpoint session': '/v1/tasks/tsk_x/checkpoint',
      'complete result': '/v1/tasks/tsk_x/complete',
      'fail error.details': '/v1/tasks/tsk_x/fail',
      'claim complete[].result': `/v1/agents/${agent.agentId}/claim`,
    };
    const method = field.startsWith('checkpoint') ? 'PUT' : 'POST';
    return [
      method,
      url[field] ?? '/nowhere',
      {
        ...(field.includes('create') ? {} : { token: agent.token }),
        payload,
        headers: { 'content-type': 'application/json' },
      },
    ];
  }

  it('a configured jsonMaxDepth applies', async () => {
    const shallow = await createHarness({ limits: { jsonMaxDepth: 3 } });
    try {
      const ok = await shallow.request('POST', '/v1/tasks', { body: { type: 't', payload: { a: [1] } } });
      expect(ok.statusCode).toBe(201);
      const refused = await shallow.request('POST', '/v1/tasks', {
        body: { type: 't', payload: { a: [[1]] } },
      });
      expect(refused.statusCode).toBe(400);
      expect(JSON.parse(refused.body).error.details).toMatchObject({ maxDepth: 3 });
    } finally {
      await shallow.close();
    }
  });
});
