export interface EmbeddedServer {
  /** `postgres://postgres:postgres@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  /** Stop the server (fast shutdown); its data directory stays for the caller to remove. */
  stop(): Promise<void>;
  /** Start it again on the same port and data (after `stop`). */
  restart(): Promise<void>;
}

export interface EmbeddedOptions {
  port?: number;
  /**
   * Serve TLS with this certificate and key (PEM files), copied into the data directory. With
   * `require`, TCP connections without TLS are refused (pg_hba.conf: `hostssl` only).
   */
  tls?: { certFile: string; keyFile: string; require?: boolean };
}

/** Initialise `dataDir` (must not exist; its parent must be readable by the `postgres` user) and start. */
export function startEmbeddedPostgres(dataDir: string, options?: EmbeddedOptions): Promise<EmbeddedServer>;
