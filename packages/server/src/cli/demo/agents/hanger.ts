/**
 * `hanger` (rouse demo --act watchdog): counts steps and stores its state as its snapshot after each
 * one. At step 7 it freezes for good (it SIGSTOPs itself: no more heartbeats, no
 * answer to anything). The ladder's `snapshot_and_restart` goes through its supervisor, which kills
 * the frozen process and starts a new one; that incarnation resumes from the snapshot.
 */
import { loop, startAgent, tell } from './kit.js';

const FREEZE_AT = 7;
/** `froze`: it froze once already (saved just before it did), so the incarnation after does not. */
let state = { step: 0, froze: false };
const m = await startAgent(() => state);
const restored = m.restore();
if (restored !== null) state = { step: Number(restored.step ?? 0), froze: restored.froze === true };
const incarnation = m.incarnation ?? 1;
tell(restored === null ? 'started' : 'resumed', { incarnation, step: state.step });

await loop(m, 250, async () => {
  await m.safePoint();
  if (!state.froze && state.step + 1 >= FREEZE_AT) {
    state = { step: state.step + 1, froze: true };
    m.metadata({ step: state.step });
    await m.snapshot(state).catch(() => undefined);
    tell('freezing', { step: state.step });
    process.kill(process.pid, 'SIGSTOP');
    return;
  }
  state = { ...state, step: state.step + 1 };
  m.metadata({ step: state.step });
  await m.snapshot(state).catch(() => undefined);
});
