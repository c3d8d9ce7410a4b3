import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OutputRing } from './output-ring.js';
import {
  environCarries,
  ProcSampler,
  type ProcStat,
  parseProcStat,
  readProcTable,
  treeOf,
} from './proc-stat.js';

const line = (
  pid: number,
  comm: string,
  ppid: number,
  pgrp: number,
  utime: number,
  stime: number,
  rss: number,
) =>
  `${pid} (${comm}) S ${ppid} ${pgrp} ${pgrp} 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 1 0 12345 1000000 ${rss} 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0`;

describe('/proc parsing', () => {
  it('reads pid, name (with spaces and parentheses), parent, group, cpu ticks and resident pages', () => {
    expect(parseProcStat(line(42, 'my (odd) prog', 7, 42, 150, 50, 2560))).toEqual({
      pid: 42,
      comm: 'my (odd) prog',
      state: 'S',
      ppid: 7,
      pgrp: 42,
      cpuTicks: 200,
      rssPages: 2560,
    });
    expect(parseProcStat('garbage')).toBeNull();
  });

  it('a tree is the process group plus descendants that left it', () => {
    const table = [
      line(10, 'root', 1, 10, 0, 0, 1),
      line(11, 'kid', 10, 10, 0, 0, 1),
      line(12, 'setsid-grandkid', 11, 12, 0, 0, 1),
      line(13, 'great', 12, 12, 0, 0, 1),
      line(20, 'other', 1, 20, 0, 0, 1),
    ].map((l) => parseProcStat(l) as ProcStat);
    expect(
      treeOf(10, table)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([10, 11, 12, 13]);
  });

  it('samples RSS as pages × page size and CPU % over the wall time between samples', () => {
    let ticks = 0;
    const sampler = new ProcSampler(() => [parseProcStat(line(10, 'a', 1, 10, ticks, 0, 100)) as ProcStat], {
      pageSize: 4096,
      ticksPerSecond: 100,
    });
    expect(sampler.sample([10], 1000).get(10)).toEqual({ rssBytes: 409600, cpuPercent: null, pids: [10] });
    ticks = 50; // half a second of CPU over one second of wall time
    expect(sampler.sample([10], 2000).get(10)?.cpuPercent).toBe(50);
  });

  it('reads this real machine: a spawned process and its child are in its tree', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & wait'], { detached: true, stdio: 'ignore' });
    try {
      let tree: number[] = [];
      for (let i = 0; i < 100 && tree.length < 2; i++) {
        tree = treeOf(child.pid!, readProcTable()).map((p) => p.pid);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(tree).toContain(child.pid);
      expect(tree.length).toBe(2);
      const s = new ProcSampler().sample([child.pid!], Date.now()).get(child.pid!);
      expect(s?.rssBytes).toBeGreaterThan(0);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
  });
});

describe('environCarries', () => {
  it('finds a token among the words of one variable, and nowhere else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rouse-environ-'));
    const environ = (pid: number, entries: string[]) => {
      mkdirSync(join(dir, String(pid)));
      writeFileSync(join(dir, String(pid), 'environ'), `${entries.join('\0')}\0`);
    };
    environ(1, ['PATH=/bin', 'MARK=outer inner', 'HOME=/root']);
    environ(2, ['NOT_MARK=inner', 'OTHER=MARK=inner']);
    environ(3, ['MARK=innermost']);
    environ(4, ['MARK=inner']); // the last entry, no value after it
    expect(environCarries(1, 'MARK', 'inner', dir)).toBe(true);
    expect(environCarries(1, 'MARK', 'outer', dir)).toBe(true);
    expect(environCarries(2, 'MARK', 'inner', dir)).toBe(false);
    expect(environCarries(3, 'MARK', 'inner', dir)).toBe(false);
    expect(environCarries(4, 'MARK', 'inner', dir)).toBe(true);
    expect(environCarries(5, 'MARK', 'inner', dir)).toBe(false); // no such process
  });
});

describe('OutputRing', () => {
  it('keeps the last bytes only, returns completed lines, and tails from a line boundary', () => {
    const ring = new OutputRing(32);
    expect(ring.push(Buffer.from('one\ntw'))).toEqual(['one']);
    expect(ring.push(Buffer.from('o\nthree\r\n'))).toEqual(['two', 'three']);
    ring.push(Buffer.from('0123456789012345678901234567\n'));
    expect(ring.bytes).toBe(32);
    // A line boundary in reach: the tail starts after it; none: the last characters as they are.
    expect(ring.tail(31)).toBe('0123456789012345678901234567\n');
    expect(ring.tail(10)).toBe('901234567\n');
    expect(ring.tail(1000).length).toBe(32);
  });
});
