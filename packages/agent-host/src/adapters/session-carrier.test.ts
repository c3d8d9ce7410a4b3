import { describe, expect, it } from 'vitest';
import { packSession, SessionCarrierError, unpackSession } from './session-carrier.js';

describe('the session carrier', () => {
  it('packs files into one blob and back, bytes intact', () => {
    const files = [
      { path: 'sessions/2026/12/02/rollout-a.jsonl', content: Buffer.from('{"a":1}\n{"b":"é"}\n') },
      { path: 'empty', content: Buffer.alloc(0) },
      { path: 'bin', content: Buffer.from([0, 10, 255, 10]) },
    ];
    expect(unpackSession(packSession(files))).toEqual(files);
    expect(unpackSession(packSession([]))).toEqual([]);
  });

  it('refuses paths that leave the home and blobs that are not packed sessions', () => {
    for (const path of ['/etc/passwd', '../x', 'a/../../x', '']) {
      expect(() => packSession([{ path, content: Buffer.from('x') }])).toThrow(SessionCarrierError);
    }
    const evil = Buffer.from(`rouse-session/1\n${JSON.stringify([{ path: '../x', bytes: 1 }])}\nx`);
    expect(() => unpackSession(evil)).toThrow(/relative/);
    expect(() => unpackSession(Buffer.from('hello'))).toThrow(/not a packed session/);
    const good = packSession([{ path: 'a', content: Buffer.from('abc') }]);
    expect(() => unpackSession(good.subarray(0, good.length - 1))).toThrow(/shorter/);
    expect(() => unpackSession(Buffer.concat([good, Buffer.from('z')]))).toThrow(/longer/);
  });
});
