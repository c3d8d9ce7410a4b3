/**
 * `hanger` (rouse demo --act watchdog): counts steps and stores its state as its snapshot after each
 * one. At step 7 its first incarnation freezes for good (it SIGSTOPs itself: no more heartbeats, no
 * answer to anything). The ladder's `snapshot_and_restart` goes through its supervisor, which kills
 * the frozen process and starts a new one; that incarnation resumes from the snapshot.
 */
import { loop, startAgent, tell } from './kit.js';

const FREEZE_AT = 7;
let state = { step: 0 };
const m = await startAgent(() => state);
const restored = m.restore();
if (restored !== null) state = { step: Number(restored.step ?? 0) };
const incarnation = m.incarnation ?? 1;
tell(restored === null ? 'started' : 'resumed', { incarnation, step: state.step });

await loop(m, 250, async () => {
  await m.safePoint();
  state = { step: state.step + 1 };
  m.metadata({ step: state.step });
  await m.snapshot(state).catch(() => undefined);
  if (restored === null && state.step >= FREEZE_AT) {
    tell('freezing', { step: state.step });
    process.kill(process.pid, 'SIGSTOP');
  }
});
