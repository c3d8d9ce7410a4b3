/** The escaping template and the views built on it: nothing a user sends becomes markup. */
import type { Task } from '@rouse/protocol';
import { describe, expect, it } from 'vitest';
import { percentile } from './format.js';
import { html } from './html.js';
import type { ViewContext } from './layout.js';
import { tasksView } from './views/tasks.js';

const ctx: ViewContext = {
  now: 1_700_000_000_000,
  role: 'admin',
  csrf: 'csrf"<x>',
  here: '/tasks?q="><script>',
};

describe('html', () => {
  it('escapes every interpolated value, in text and in attributes; Html values and arrays pass as markup', () => {
    const evil = `"><script>alert('x')</script>&`;
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</p>',
    );
    expect(html`<ul>${['a', 'b<'].map((x) => html`<li>${x}</li>`)}</ul>`.value).toBe(
      '<ul><li>a</li><li>b&lt;</li></ul>',
    );
    expect(html`${null}${undefined}${false}${0}`.value).toBe('0');
  });

  it('a task list with hostile ids, types, labels and search text renders no foreign markup', () => {
    const task = {
      id: 'tsk_<img src=x onerror=alert(1)>',
      type: '<b>type</b>',
      status: 'created',
      final: false,
      attempt: 0,
      maxAttempts: 3,
      agentId: null,
      progress: null,
      phase: '<i>phase</i>',
      createdAt: ctx.now,
    } as unknown as Task;
    const view = tasksView(
      { filters: { q: '"><svg onload=alert(1)>' }, tasks: [task], nextCursor: null },
      ctx,
    );
    const out = `${view.head?.value ?? ''}${view.live.value}`;
    expect(out).not.toMatch(/<(img|b|i|svg|script)[\s>]/);
    expect(out).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(out).toContain('value="csrf&quot;&lt;x&gt;"');
  });
});

describe('percentile', () => {
  it('is the nearest rank of an ascending list, null when empty', () => {
    expect(percentile([], 0.5)).toBeNull();
    expect(percentile([10, 20, 30, 40], 0.5)).toBe(20);
    expect(percentile([10, 20, 30, 40], 0.99)).toBe(40);
    expect(percentile([7], 0.9)).toBe(7);
  });
});
