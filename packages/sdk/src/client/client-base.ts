/**
 * What every layer of the {@link Client} shares: the resolved options and the transport. The client's
 * methods are grouped by concern, one layer per file (tasks, holder writes, agents, watchdog), each
 * extending the one before; `Client` is the last layer and the only one exported.
 */
import { type ClientOptions, type ResolvedClientOptions, resolveClientOptions } from '../client-options.js';
import { Transport } from '../transport.js';

export abstract class ClientBase {
  readonly options: ResolvedClientOptions;
  protected readonly http: Transport;

  /** @param transport internal: share a transport's connection pool (`withToken`). */
  constructor(options: ClientOptions, transport?: Transport) {
    this.options = resolveClientOptions(options);
    const { url, token, fetch, callStream, requestTimeoutMs, retry } = this.options;
    this.http =
      transport ?? new Transport({ baseUrl: url, token, fetch, callStream, requestTimeoutMs, retry });
  }

  protected get<T>(path: string): Promise<T> {
    return this.http.json<T>('GET', path, undefined, { retry: true });
  }
}
