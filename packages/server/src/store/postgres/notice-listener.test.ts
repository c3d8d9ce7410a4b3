/** Stream notice payloads: every kind of ref survives the trip through NOTIFY's text. */
import { describe, expect, it } from 'vitest';
import type { StreamNotice } from '../store.js';
import { parseStreamNotice, streamNoticePayloads } from './notice-listener.js';

describe('stream notice payloads', () => {
  it('carry transition, progress, agent, condition, intervention and alert refs, and refuse a malformed ref', () => {
    const notice: StreamNotice = {
      origin: 'coord-1',
      refs: [
        { kind: 'transition', taskId: 'tsk_a', seq: 2 },
        { kind: 'progress', taskId: 'tsk_b' },
        { kind: 'agent', agentId: 'agt_c', event: 'status' },
        { kind: 'condition', seq: 41 },
        { kind: 'intervention', id: 'itv_d' },
        { kind: 'alert', id: 'alr_e' },
      ],
    };
    const payloads = streamNoticePayloads(notice);
    expect(payloads).toHaveLength(1);
    expect(payloads.map(parseStreamNotice)).toEqual([notice]);
    expect(parseStreamNotice('{"o":"c","r":[["c","41"]]}')).toBeNull();
  });
});
