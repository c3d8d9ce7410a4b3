import { describe, expect, it } from 'vitest';
import { formatEvidence, humanizeKey } from './diagnosis.js';
import { formatLogRecord } from './log-line.js';
import { createProgressLine } from './progress.js';
import { createStyle } from './style.js';
import { renderPairs, renderTable } from './table.js';
import { formatDuration, formatRelative } from './time.js';

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [850, '850ms'],
    [1000, '1s'],
    [1234, '1.2s'],
    [15_000, '15s'],
    [180_000, '3m'],
    [190_000, '3m 10s'],
    [3_600_000, '1h'],
    [5_400_000, '1h 30m'],
    [90_000_000, '1d 1h'],
    [-1500, '-1.5s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('formatRelative', () => {
  it('past, future, now and missing', () => {
    expect(formatRelative(1000, 13_000)).toBe('12s ago');
    expect(formatRelative(20_000, 15_000)).toBe('in 5s');
    expect(formatRelative(14_500, 15_000)).toBe('now');
    expect(formatRelative(null, 15_000)).toBe('-');
  });
});

describe('renderTable', () => {
  it('pads columns to the widest cell, right-aligns numbers, ignores ANSI codes in widths', () => {
    const style = createStyle(true);
    const lines = renderTable(
      [
        { id: 'a', n: 5, s: style.green('ok') },
        { id: 'bbbb', n: 123, s: 'failed' },
      ],
      [
        { header: 'ID', value: (r) => r.id },
        { header: 'N', value: (r) => String(r.n), right: true },
        { header: 'S', value: (r) => r.s },
      ],
    );
    expect(lines[0]).toBe('ID      N  S');
    expect(lines[1]).toBe(`a       5  ${style.green('ok')}`);
    expect(lines[2]).toBe('bbbb  123  failed');
  });

  it('truncates with an ellipsis', () => {
    const lines = renderTable([{ v: 'abcdefghij' }], [{ header: 'V', value: (r) => r.v, maxWidth: 5 }]);
    expect(lines[1]).toBe('abcd…');
  });

  it('aligns pairs', () => {
    expect(
      renderPairs([
        ['a', '1'],
        ['long', '2'],
      ]),
    ).toEqual(['a:    1', 'long: 2']);
  });
});

describe('diagnosis evidence', () => {
  it('renders values by the unit in their key', () => {
    const now = 100_000;
    expect(humanizeKey('lastPollAt')).toBe('last poll at');
    // The duration formatting says the unit: "since last 2.2s", not "since last ms 2.2s".
    expect(humanizeKey('sinceLastMs')).toBe('since last');
    expect(humanizeKey('heartbeatIntervalMs')).toBe('heartbeat interval');
    expect(humanizeKey('inMs')).toBe('in');
    expect(formatEvidence('lateByMs', 2500, now)).toBe('2.5s');
    expect(formatEvidence('lastPollAt', 88_000, now)).toMatch(/^12s ago \(\d\d:\d\d:\d\d\.\d{3}\)$/);
    expect(formatEvidence('types', ['a', 'b'], now)).toBe('a, b');
    expect(formatEvidence('hasUploadedResult', true, now)).toBe('yes');
    expect(formatEvidence('x', null, now)).toBe('-');
    expect(formatEvidence('graceUntil', 103_000, now)).toMatch(/^in 3s \(/);
    expect(formatEvidence('lastError', { code: 'boom', message: 'it broke' }, now)).toBe('boom: it broke');
  });
});

describe('pretty log lines', () => {
  it('turns a pino record into one readable line', () => {
    const line = formatLogRecord(
      JSON.stringify({
        level: 40,
        time: 0,
        pid: 1,
        hostname: 'h',
        component: 'api',
        msg: 'slow request',
        url: '/v1/tasks',
        ms: 12,
      }),
      createStyle(false),
    );
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} {2}WARN {3}api {2}slow request {2}url=\/v1\/tasks ms=12$/);
    expect(formatLogRecord('not json', createStyle(false))).toBe('not json');
  });
});

describe('progress line', () => {
  it('redraws in place and clears itself; silent when disabled', () => {
    let out = '';
    const p = createProgressLine((s) => {
      out += s;
    }, true);
    p.update('fetching… 100');
    p.update('fetching… 2');
    p.done();
    expect(out).toBe('\rfetching… 100\rfetching… 2  \r             \r');
    let quiet = '';
    const q = createProgressLine((s) => {
      quiet += s;
    }, false);
    q.update('x');
    q.done();
    expect(quiet).toBe('');
  });
});
