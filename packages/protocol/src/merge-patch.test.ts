import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMergePatch, composeMergePatches, jsonEqual, mergePatchBetween } from './merge-patch.js';
import type { Json, JsonObject } from './task.js';

describe('applyMergePatch (RFC 7386)', () => {
  // The examples of RFC 7386 Appendix A.
  const cases: [Json, Json, Json][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(cases)('%j patched with %j is %j', (target, patch, expected) => {
    const before = JSON.stringify(target);
    expect(applyMergePatch(target, patch)).toEqual(expected);
    expect(JSON.stringify(target)).toBe(before); // the target is not changed
  });
});

/** JSON objects whose object members are never null (a merge patch cannot set a member to null). */
const { state } = fc.letrec<{ value: Json; state: JsonObject }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 4 }),
    fc.array(fc.oneof(fc.constant(null), fc.integer(), tie('state')), { maxLength: 3 }),
    tie('state'),
  ),
  state: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e'), tie('value'), {
    maxKeys: 4,
  }) as fc.Arbitrary<JsonObject>,
}));

describe('mergePatchBetween', () => {
  it('gives a patch from one state to another: incremental patches compose to the last full state', () => {
    fc.assert(
      fc.property(fc.array(state, { minLength: 1, maxLength: 8 }), (states) => {
        // full snapshots of every state vs. the first one followed by the difference to each next
        const patches = states.slice(1).map((next, i) => mergePatchBetween(states[i]!, next));
        expect(patches.every((p) => p !== null)).toBe(true);
        const composed = composeMergePatches(states[0]!, patches as JsonObject[]);
        expect(jsonEqual(composed, states.at(-1)!)).toBe(true);
        // compacting after any prefix (a new base, then the rest) composes to the same state
        for (let k = 0; k <= patches.length; k++) {
          const base = composeMergePatches(states[0]!, patches.slice(0, k) as JsonObject[]);
          expect(composeMergePatches(base, patches.slice(k) as JsonObject[])).toEqual(composed);
        }
      }),
    );
  });

  it('is {} between equal states, and null when the target has a null member', () => {
    expect(mergePatchBetween({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual({});
    expect(mergePatchBetween({ a: 1 }, { a: null })).toBeNull();
    expect(mergePatchBetween({}, { a: { b: null } })).toBeNull();
    expect(mergePatchBetween({ a: { b: 1 } }, { a: { b: 1, c: null } })).toBeNull();
    expect(mergePatchBetween({ a: 1, b: { c: 1, d: 2 } }, { b: { c: 1 }, e: [null] })).toEqual({
      a: null,
      b: { d: null },
      e: [null],
    });
  });
});

describe('a member named __proto__', () => {
  it('is a member like any other, never the prototype', () => {
    const patched = applyMergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as JsonObject;
    expect(Object.getPrototypeOf(patched)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(patched)).toBe('{"__proto__":{"polluted":true}}');
  });
});

describe('jsonEqual', () => {
  it('ignores member order and tells arrays from objects', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual({ 0: 1 }, [1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
  });
});
