/**
 * What a supervisor does with a command for one of its children (docs/design.md §6.6), and the
 * acknowledgement it sends back: `wake` sends the command's signal (else the program's `wake_signal`)
 * to the child's process group; `restart` stops it (signal, grace, SIGKILL to the group) and starts it
 * again; `terminate` stops it for good. Restart and terminate are acknowledged only once the old
 * process's exit event came, with the child's last output.
 */
import { type AgentCommand, type CommandAck, MAX_ACK_OUTPUT_CHARS } from '@rouse/protocol';
import type { ProgramInstance } from './program-instance.js';

/** Carry `c` out on `i`; resolves with its acknowledgement, or null when the child answers itself. */
export async function carryOutCommand(
  i: ProgramInstance,
  c: AgentCommand,
  id: string,
): Promise<CommandAck | null> {
  try {
    switch (c.type) {
      case 'wake': {
        const signal = (c.signal as NodeJS.Signals | undefined) ?? i.program.wakeSignal;
        if (signal === null) {
          // An SDK child answers its own wake; a plain one has nothing to be woken with.
          return i.program.sdk
            ? null
            : { commandId: id, outcome: 'unsupported', message: `${i.key} has no wake_signal` };
        }
        const sent = i.signal(signal);
        return {
          commandId: id,
          outcome: sent ? 'done' : 'failed',
          message: sent
            ? `sent ${signal} to ${i.key} (pid ${i.pid})`
            : `${i.key} is not running (${i.state})`,
        };
      }
      case 'restart': {
        const before = i.pid;
        const exit = await i.restart();
        return {
          commandId: id,
          outcome: i.pid === null ? 'failed' : 'done',
          message: `restarted ${i.key}: pid ${before ?? 'none'} ${exitText(exit)} → pid ${i.pid ?? 'none'}`,
          output: i.ring.tail(MAX_ACK_OUTPUT_CHARS),
        };
      }
      case 'terminate': {
        const before = i.pid;
        const exit = await i.stop();
        return {
          commandId: id,
          outcome: 'done',
          message: `terminated ${i.key}: pid ${before ?? 'none'} ${exitText(exit)}`,
          output: i.ring.tail(MAX_ACK_OUTPUT_CHARS),
        };
      }
      default:
        return {
          commandId: id,
          outcome: 'unsupported',
          message: `${i.key} is a plain process: it cannot ${c.type}`,
        };
    }
  } catch (err) {
    return { commandId: id, outcome: 'failed', message: (err as Error).message.slice(0, 1000) };
  }
}

function exitText(exit: { code: number | null; signal: string | null } | null): string {
  if (exit === null) return '(was not running)';
  return exit.signal !== null ? `(killed by ${exit.signal})` : `(exited with code ${exit.code})`;
}
