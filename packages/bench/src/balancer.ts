/**
 * A round-robin TCP balancer for the bench: several coordinators behind one address, as a load
 * balancer in front of stateless replicas would put them (docs/design.md §8). Each client connection goes
 * to the next coordinator in turn and stays there (keep-alive), like any L4 balancer.
 */
import net from 'node:net';

export interface Balancer {
  readonly url: string;
  readonly port: number;
  /** Connections sent to each backend so far. */
  readonly connections: number[];
  close(): Promise<void>;
}

export async function startBalancer(backends: { port: number }[]): Promise<Balancer> {
  if (backends.length === 0) throw new Error('the balancer needs at least one backend');
  const connections = backends.map(() => 0);
  const open = new Set<net.Socket>();
  let next = 0;
  const server = net.createServer((client) => {
    const i = next;
    next = (next + 1) % backends.length;
    connections[i] = (connections[i] ?? 0) + 1;
    const upstream = net.connect(backends[i]!.port, '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    open.add(client);
    open.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
