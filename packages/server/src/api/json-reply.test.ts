/** jsonReplyBody gives exactly JSON.stringify's text, sliced or not. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonReplyBody } from './json-reply.js';

const text = (body: string | Buffer): string => (typeof body === 'string' ? body : body.toString('utf8'));

describe('jsonReplyBody', () => {
  it('is JSON.stringify for any JSON value, with long top-level arrays among its members', () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary' }), value, { maxKeys: 4 }),
        fc.array(value, { minLength: 0, maxLength: 300 }),
        fc.array(fc.string({ unit: 'binary' }), { minLength: 60, maxLength: 200 }),
        (rest, tasks, names) => {
          const payload = { ...rest, tasks, names, after: rest };
          expect(text(jsonReplyBody(payload))).toBe(JSON.stringify(payload));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves out what JSON.stringify leaves out, keeps key order and honours toJSON', () => {
    const long = Array.from({ length: 200 }, (_, i) => (i % 7 === 0 ? undefined : { i, at: new Date(i) }));
    const payload = {
      2: 'integer keys first',
      tasks: long,
      skipped: undefined,
      fn: () => 1,
      sym: Symbol('x'),
      date: new Date(0),
      nested: { toJSON: () => 'custom' },
      ü: 'é ☃ 😀',
    };
    const body = jsonReplyBody(payload);
    expect(Buffer.isBuffer(body)).toBe(true);
    expect(text(body)).toBe(JSON.stringify(payload));
  });

  it('is plain JSON.stringify text when nothing is long, or when the payload is not a plain object', () => {
    expect(jsonReplyBody({ tasks: [1, 2, 3] })).toBe('{"tasks":[1,2,3]}');
    expect(jsonReplyBody([...Array(100).keys()])).toBe(JSON.stringify([...Array(100).keys()]));
    const withToJSON = { tasks: [...Array(100).keys()], toJSON: () => ({ short: true }) };
    expect(jsonReplyBody(withToJSON)).toBe('{"short":true}');
    expect(jsonReplyBody(null)).toBe('null');
  });
});
