/**
 * The demo's shared notebook: friendly names for tasks and agents, the clock since the start, and the
 * one place narrative lines are printed (`+3.2s  ▸ healthy-1 claimed summarize#4 …`).
 */
import type { Task } from '@rouse/protocol';
import type { CliContext } from '../context.js';
import { createStyle, type Style } from '../format/style.js';

export class DemoBook {
  readonly style: Style;
  readonly startedAt: number;
  private readonly taskNames = new Map<string, string>();
  readonly agentNames = new Map<string, string>();

  /** With `toStderr` (for `--json`) the narrative goes to stderr and stdout stays machine-readable. */
  constructor(
    readonly ctx: CliContext,
    private readonly toStderr = false,
  ) {
    this.style = createStyle(ctx.io.color && !toStderr);
    this.startedAt = ctx.now();
  }

  nameTask(id: string, name: string): void {
    this.taskNames.set(id, name);
  }
  nameAgent(id: string, name: string): void {
    this.agentNames.set(id, name);
  }
  task(t: Pick<Task, 'id' | 'type'> | string): string {
    const id = typeof t === 'string' ? t : t.id;
    return this.taskNames.get(id) ?? (typeof t === 'string' ? id : `${t.type}:${id.slice(-6)}`);
  }
  agent(id: string | null | undefined): string {
    if (!id) return '-';
    return this.agentNames.get(id) ?? id;
  }

  elapsed(): string {
    return `+${((this.ctx.now() - this.startedAt) / 1000).toFixed(1)}s`.padStart(7);
  }
  print(line = ''): void {
    if (this.toStderr) this.ctx.warn(line);
    else this.ctx.print(line);
  }
  /** One narrative line with the elapsed time. */
  say(icon: string, text: string): void {
    this.print(`${this.style.dim(this.elapsed())}  ${icon} ${text}`);
  }
  /** A narrative line without the clock (indented detail). */
  detail(text: string): void {
    this.print(`           ${this.style.dim(text)}`);
  }
  heading(text: string): void {
    this.print('');
    this.print(this.style.bold(text));
  }
}
