/**
 * `staller` (rouse demo --act watchdog): counts steps in its heartbeat metadata (`step`), and at
 * step 6 gets stuck waiting for something that never comes. A wake (the ladder's `send_signal`, which
 * its supervisor turns into SIGUSR1 and the SDK into a wake at the next safe point) makes it give up
 * waiting and go on: the stall closes, the intervention succeeded.
 */
import { loop, startAgent, tell } from './kit.js';

const STALL_AT = 6;
let state = { step: 0 };
let stuck = false;
let stalledOnce = false;
const m = await startAgent(() => state);
const restored = m.restore();
if (restored !== null) state = { step: Number(restored.step ?? 0) };
tell('started', { incarnation: m.incarnation ?? 1, step: state.step });

await loop(m, 250, async () => {
  if ((await m.safePoint()) && stuck) {
    stuck = false;
    tell('woken', { step: state.step });
  }
  if (!stalledOnce && state.step >= STALL_AT) {
    stuck = true;
    stalledOnce = true;
    tell('stuck', { step: state.step });
  }
  if (stuck) return;
  state = { step: state.step + 1 };
  m.metadata({ step: state.step });
});
