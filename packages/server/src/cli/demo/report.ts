/** The end of the demo: `rouse why`-style diagnoses for a few tasks, the hung task's history, a summary table. */
import type { Task } from '@rouse/protocol';
import type { Client } from '@rouse/sdk';
import { renderEvents } from '../actions/show.js';
import { renderDiagnosis } from '../format/diagnosis.js';
import { renderTable } from '../format/table.js';
import { formatAttempts, taskNote } from '../format/task.js';
import type { DemoBook } from './book.js';

export async function printDiagnoses(book: DemoBook, admin: Client, ids: string[]): Promise<void> {
  book.heading('Why? — what `rouse why <id>` says about a few tasks');
  for (const id of ids) {
    const d = await admin.diagnose(id);
    book.print('');
    book.print(`$ rouse why ${book.style.bold(book.task(id))}`);
    for (const line of renderDiagnosis(d, book.ctx.now(), book.style)) book.print(`  ${line}`);
  }
}

export async function printHistory(book: DemoBook, admin: Client, id: string, title: string): Promise<void> {
  book.heading(title);
  const events = await admin.getTaskEvents(id);
  for (const line of renderEvents(events, book.style, book.agentNames)) book.print(`  ${line}`);
}

export function printSummary(book: DemoBook, tasks: Task[], fenced: number): void {
  book.heading('Summary');
  const now = book.ctx.now();
  const lines = renderTable(tasks, [
    { header: 'TASK', value: (t) => book.task(t) },
    { header: 'ID', value: (t) => t.id },
    { header: 'STATUS', value: (t) => book.style.status(t.status) },
    { header: 'ATTEMPTS', value: (t) => formatAttempts(t), right: true },
    { header: 'LAST AGENT', value: (t) => book.agent(t.agentId) },
    {
      header: 'NOTE',
      value: (t) => (t.error && t.final ? `${t.error.code}: ${t.error.message}` : taskNote(t, now)),
      maxWidth: 60,
    },
  ]);
  for (const line of lines) book.print(`  ${line}`);
  const count = new Map<string, number>();
  for (const t of tasks) count.set(t.status, (count.get(t.status) ?? 0) + 1);
  const parts = [...count.entries()].map(([s, n]) => `${n} ${s}`);
  const retried = tasks.filter((t) => t.attempt > 1).length;
  book.print('');
  book.print(
    `  ${tasks.length} tasks: ${parts.join(', ')}; ${retried} needed more than one attempt; ${fenced} stale write(s) fenced off.`,
  );
  book.print('  Nothing was lost, nothing ran twice to completion, and every state has a reason.');
}
