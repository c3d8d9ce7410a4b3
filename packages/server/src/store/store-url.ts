/**
 * Whether a store URL names PostgreSQL (`postgres://` or `postgresql://`). Only the scheme: the
 * callers validate the rest. A leaf module, so that `rouse serve` can ask before it loads a store.
 */
export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}
