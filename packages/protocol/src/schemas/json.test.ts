import { describe, expect, it } from 'vitest';
import { isJsonValue, json } from './common.js';

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

describe('json: any JSON value', () => {
  it('accepts what JSON.parse returns, and hands back the same object', () => {
    const text = '{"a":[1,-2500.5,"x",true,false,null,{"b":{}}],"c":[],"":"empty key","__x":0}';
    const value = JSON.parse(text);
    expect(isJsonValue(value)).toBe(true);
    const parsed = json.parse(value);
    expect(parsed).toBe(value);
    expect(JSON.stringify(parsed)).toBe(text);
    for (const scalar of [null, 0, 1.5, '', 'text', true, false]) expect(json.parse(scalar)).toBe(scalar);
    expect(isJsonValue(Object.assign(Object.create(null), { a: 1 }))).toBe(true);
  });

  it('refuses what JSON cannot carry, at any depth', () => {
    const refused: unknown[] = [
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      10n,
      Symbol('s'),
      () => 1,
      new Date(0),
      new Map(),
      /re/,
      new (class Point {
        x = 1;
      })(),
      { a: { b: [1, undefined] } },
      { a: Number.NaN },
      // biome-ignore lint/suspicious/noSparseArray: the hole is the point
      [1, , 3],
    ];
    for (const v of refused) expect(isJsonValue(v), String(v)).toBe(false);
    const r = json.safeParse({ a: [new Date(0)] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe('must be a JSON value');
  });

  it('stops at 100 levels of nesting, so a cycle ends the walk instead of hanging it', () => {
    expect(isJsonValue(nested(100))).toBe(true);
    expect(isJsonValue(nested(101))).toBe(false);
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(isJsonValue(cyclic)).toBe(false);
    const list: unknown[] = [];
    list.push(list);
    expect(isJsonValue(list)).toBe(false);
  });
});
