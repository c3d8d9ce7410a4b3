/**
 * A class using `@trackIteration` as an agent author would, compiled by TypeScript (standard
 * decorators, no `experimentalDecorators`) in monitored.test.ts — the test runner's own transform does
 * not lower standard decorators. `trackIteration` is passed in so the compiled module imports nothing.
 */
import type { Monitor } from '../monitor/monitor.js';
import type { trackIteration as TrackIteration } from '../monitor/monitored.js';

export function defineBot(trackIteration: typeof TrackIteration, shared: Monitor) {
  class Bot {
    monitor: Monitor | undefined;
    handled: string[] = [];

    @trackIteration((bot: Bot) => bot.monitor)
    async handle(message: string): Promise<string> {
      this.handled.push(message);
      if (message === 'bad') throw new Error('cannot handle bad');
      return message.toUpperCase();
    }

    @trackIteration(shared)
    async tick(): Promise<number> {
      return this.handled.length;
    }
  }
  return Bot;
}
