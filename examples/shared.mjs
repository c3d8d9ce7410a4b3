// Small helpers the examples share: where the coordinator is, a logger for the SDK, and command-line
// switches. Nothing here is needed to use the SDK.
import { readFileSync } from 'node:fs';

/** The coordinator: ROUSE_URL, else a local `npx rouse serve`. */
export const url = process.env.ROUSE_URL ?? 'http://127.0.0.1:7070';

/** The enrollment token: ROUSE_AGENT_TOKEN, else `.rouse/agent.token` (what `npx rouse serve` writes here). */
export function agentToken() {
  if (process.env.ROUSE_AGENT_TOKEN) return process.env.ROUSE_AGENT_TOKEN;
  try {
    return readFileSync('.rouse/agent.token', 'utf8').trim();
  } catch {
    process.stderr.write(
      'set ROUSE_AGENT_TOKEN (the enrollment token, in .rouse/agent.token of `npx rouse serve`)\n',
    );
    process.exit(2);
  }
}

/** `--name value` or `--name=value` from argv, else env `envName`, else undefined. */
export function option(name, envName) {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) return args[i + 1];
    if (args[i].startsWith(`--${name}=`)) return args[i].slice(name.length + 3);
  }
  return process.env[envName];
}

/** One JSON line on stdout per thing worth seeing (easy to read, easy for a test to follow). */
export function print(event, fields = {}) {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

/** A logger for the SDK (any pino logger works too): info and up on stderr. */
export const logger = {
  debug() {},
  info: (_obj, msg) => process.stderr.write(`info: ${msg ?? ''}\n`),
  warn: (_obj, msg) => process.stderr.write(`warn: ${msg ?? ''}\n`),
  error: (obj, msg) => process.stderr.write(`error: ${msg ?? ''} ${obj?.err?.message ?? ''}\n`),
};
