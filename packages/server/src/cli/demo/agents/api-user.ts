/**
 * `api-user` (rouse demo --act watchdog): calls a model API (`LLM_API_URL`, served by the demo) once a
 * step through `withDependency('llm-api', …)`, which reports what each answer says about it. While
 * the API answers 429 with Retry-After, the SDK reports `llm-api` as `rate_limited` and the agent waits
 * (its progress stops); once the API answers again it goes on.
 */
import { loop, startAgent, tell } from './kit.js';

const url = process.env.LLM_API_URL as string;
let state = { step: 0 };
let limited = false;
const m = await startAgent(() => state);
tell('started', { incarnation: m.incarnation ?? 1, step: state.step });

await loop(m, 300, async () => {
  await m.safePoint();
  const res = await m
    .withDependency('llm-api', () => fetch(url, { signal: AbortSignal.timeout(2000) }))
    .catch(() => null);
  await res?.arrayBuffer().catch(() => undefined);
  if (res?.status === 429) {
    if (!limited) tell('rate_limited', { step: state.step, retryAfter: res.headers.get('retry-after') });
    limited = true;
    return;
  }
  if (res === null || !res.ok) return;
  if (limited) tell('recovered', { step: state.step });
  limited = false;
  state = { step: state.step + 1 };
  m.metadata({ step: state.step });
});
