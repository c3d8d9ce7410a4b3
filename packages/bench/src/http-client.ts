/**
 * A minimal keep-alive JSON client over `node:http` for the bench harness itself (creating tasks,
 * reading them back, the detection agent). It is deliberately thinner than the SDK's `Client` so the
 * harness spends as little of the shared CPU as possible; the SDK is what the worker process measures.
 */
import http from 'node:http';

export interface HttpClientOptions {
  /** Base URL of the coordinator, e.g. `http://127.0.0.1:4000`. */
  url: string;
  /** Bearer token sent on every request. */
  token: string;
  /** Sockets kept open to the coordinator. @default 16 */
  maxSockets?: number;
}

export interface HttpResponse<T> {
  status: number;
  /** Parsed JSON body, or `undefined` when `parse` was false or the body was empty. */
  body: T | undefined;
}

export class BenchHttpError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly responseText: string,
  ) {
    super(`${method} ${path} → ${status}: ${responseText.slice(0, 500)}`);
    this.name = 'BenchHttpError';
  }
}

export interface RequestOptions {
  /** Parse the JSON response (false: drain and discard it, to keep client CPU low). @default true */
  parse?: boolean;
  /** Accept these non-2xx statuses instead of throwing. */
  okStatuses?: number[];
  /** Override the client's token for this request. */
  token?: string;
  /** Return the body as text instead of parsing JSON. */
  raw?: boolean;
}

export class HttpClient {
  readonly #agent: http.Agent;
  readonly #host: string;
  readonly #port: number;
  readonly #token: string;

  constructor(options: HttpClientOptions) {
    const u = new URL(options.url);
    this.#host = u.hostname;
    this.#port = Number(u.port || 80);
    this.#token = options.token;
    this.#agent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 16 });
  }

  get<T>(path: string, options?: RequestOptions): Promise<T> {
    return this.request<T>('GET', path, undefined, options).then((r) => r.body as T);
  }

  /** GET a non-JSON body (e.g. `/metrics`) as text. */
  async getText(path: string): Promise<string> {
    const res = await this.request<string>('GET', path, undefined, { raw: true });
    return res.body ?? '';
  }

  post<T>(path: string, body: unknown, options?: RequestOptions): Promise<T> {
    return this.request<T>('POST', path, body, options).then((r) => r.body as T);
  }

  request<T>(
    method: string,
    path: string,
    body: unknown,
    options: RequestOptions = {},
  ): Promise<HttpResponse<T>> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: http.OutgoingHttpHeaders = {
      authorization: `Bearer ${options.token ?? this.#token}`,
      accept: 'application/json',
    };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    }
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: this.#host, port: this.#port, method, path, headers, agent: this.#agent },
        (res) => {
          const status = res.statusCode ?? 0;
          const ok = (status >= 200 && status < 300) || options.okStatuses?.includes(status);
          if (ok && options.parse === false) {
            res.resume();
            res.on('end', () => resolve({ status, body: undefined }));
            res.on('error', reject);
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (!ok) {
              reject(new BenchHttpError(method, path, status, text));
              return;
            }
            try {
              if (options.raw) resolve({ status, body: text as T });
              else resolve({ status, body: text.length > 0 ? (JSON.parse(text) as T) : undefined });
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('error', reject);
      if (payload) req.end(payload);
      else req.end();
    });
  }

  /** Close the kept-alive sockets. */
  close(): void {
    this.#agent.destroy();
  }
}
