/**
 * `leaker` (rouse demo --act watchdog): keeps every response it ever fetched in a cache it never
 * trims, so its memory (RSS, reported by the SDK with every heartbeat) climbs past the policy's
 * `rss_limit`. The ladder restarts it from its snapshot; the new incarnation leaks again, and the
 * next rung terminates it for good.
 */
import { loop, startAgent, tell } from './kit.js';

const LEAK_FROM = 4;
const CHUNK = 8 * 1024 * 1024;
let state = { step: 0 };
const cache: Buffer[] = [];
const m = await startAgent(() => state);
const restored = m.restore();
if (restored !== null) state = { step: Number(restored.step ?? 0) };
const incarnation = m.incarnation ?? 1;
tell(restored === null ? 'started' : 'resumed', { incarnation, step: state.step });
const leakFrom = state.step + LEAK_FROM;
let told = false;

await loop(m, 250, async () => {
  await m.safePoint();
  state = { step: state.step + 1 };
  m.metadata({ step: state.step });
  if (state.step < leakFrom) return;
  cache.push(Buffer.alloc(CHUNK, state.step)); // written, so it is resident
  if (!told) {
    told = true;
    tell('leaking', { step: state.step, incarnation });
  }
});
