// Plain JavaScript (typed by ports.d.mts): scripts/bench.mjs uses it too, without a TypeScript step.
import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (so a restarted server can come back on the same address). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
