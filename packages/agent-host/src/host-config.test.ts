import { describe, expect, it } from 'vitest';
import { HostConfigError, parseHostConfig } from './host-config.js';

const env = { ROUSE_URL: 'http://127.0.0.1:7070/', ROUSE_AGENT_TOKEN: 'enroll' };

function errors(text: string, e: NodeJS.ProcessEnv = env): string[] {
  try {
    parseHostConfig(text, 'host.yaml', e);
  } catch (err) {
    expect(err).toBeInstanceOf(HostConfigError);
    return (err as Error).message.split('\n');
  }
  throw new Error('expected the config to be refused');
}

describe('parseHostConfig', () => {
  it('takes the design example with its units, and fills the defaults', () => {
    const c = parseHostConfig(
      `
coordinator: http://127.0.0.1:7070
name: host-3
programs:
  - name: reviewer
    command: ["node", "reviewer.js"]
    instances: 2
    agent_type: llm_chain
    env: { OPENAI_BASE_URL: "http://127.0.0.1:9000", RETRIES: 3 }
    restart: { backoff: 1s, max_backoff: 5m, reset_after: 10m, budget: 5, window: 10m }
    stop: { signal: SIGTERM, grace: 15s }
    wake_signal: SIGUSR1
  - name: indexer
    command: ./index.sh --all
    progress: { output_regex: "step (\\\\d+)/(\\\\d+)" }
`,
      'host.yaml',
      { ROUSE_AGENT_TOKEN: 'enroll' },
    );
    expect(c).toMatchObject({ url: 'http://127.0.0.1:7070', token: 'enroll', name: 'host-3' });
    expect(c.programs[0]).toMatchObject({
      command: ['node', 'reviewer.js'],
      instances: 2,
      agentType: 'llm_chain',
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:9000', RETRIES: '3' },
      sdk: true,
      restart: {
        backoffMs: 1000,
        maxBackoffMs: 300_000,
        resetAfterMs: 600_000,
        budget: 5,
        windowMs: 600_000,
      },
      stop: { signal: 'SIGTERM', graceMs: 15_000 },
      wakeSignal: 'SIGUSR1',
      progressRegex: null,
    });
    // A string runs under /bin/sh; a progress regex makes it a plain program; its type is its name.
    expect(c.programs[1]).toMatchObject({
      command: ['/bin/sh', '-c', './index.sh --all'],
      agentType: 'indexer',
      sdk: false,
      instances: 1,
      wakeSignal: null,
    });
    expect(c.programs[1]!.progressRegex?.exec('step 3/4')?.slice(1)).toEqual(['3', '4']);
  });

  it('names the file and every bad field', () => {
    expect(
      errors(
        `
name: host/3
colour: blue
programs:
  - name: a
    command: []
    restart: { backoff: 5 minutes, budget: -1 }
    stop: { signal: TERM }
  - name: a
    command: x
    args: [y]
    progress: { output_regex: "(" }
`,
      ),
    ).toEqual([
      'host.yaml: colour: is not a known key (known: coordinator, name, programs)',
      'host.yaml: name: must be 1-100 letters, digits and _ . : @ - (no /): the supervisor name, one live supervisor each',
      'host.yaml: programs.0.command: must be a list such as ["node", "agent.js"], or a string run by /bin/sh',
      'host.yaml: programs.0.restart.backoff: expected a duration such as 30 (seconds) or "30s", "500ms", "5m", "1h", "1d"; got "5 minutes" (did you mean "5m"?)',
      'host.yaml: programs.0.restart.budget: must be an integer >= 0 (restarts allowed within window)',
      'host.yaml: programs.0.stop.signal: must be a signal name such as SIGTERM',
      'host.yaml: programs.1.args: goes with a command list, not a shell string',
      expect.stringMatching(
        /^host\.yaml: programs\.1\.progress\.output_regex: is not a valid regular expression/,
      ),
    ]);
    expect(errors('name: h\nprograms: []\n', {})).toEqual([
      'host.yaml: coordinator: must be the coordinator URL (http://host:port), or set ROUSE_URL',
      'host.yaml: the enrollment token is read from ROUSE_AGENT_TOKEN, which is not set',
      'host.yaml: programs: must list at least one program',
    ]);
  });
});
