/**
 * @rouse/dashboard: the dashboard's views — pure functions from the protocol's data to HTML, escaped
 * by construction (`html.ts`) — and its static assets (`assets/app.js`, `assets/app.css`), which the
 * coordinator serves itself. The server fetches the data and sends what these return.
 */
import { fileURLToPath } from 'node:url';

export * from './components.js';
export * from './format.js';
export * from './html.js';
export * from './layout.js';
export * from './views/agents.js';
export * from './views/other.js';
export * from './views/overview.js';
export * from './views/task.js';
export * from './views/tasks.js';

/** The folder of the static assets in this package (the server's build copies them into its own dist). */
export function assetsDir(): string {
  return fileURLToPath(new URL('../assets/', import.meta.url));
}
