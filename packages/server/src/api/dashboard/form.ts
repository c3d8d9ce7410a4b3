/** The dashboard's form posts (`application/x-www-form-urlencoded`), read as the routes need them. */

export type Form = Record<string, string | string[]>;

export function parseForm(text: string): Form {
  const out: Form = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const had = out[k];
    out[k] = had === undefined ? v : [had, v].flat();
  }
  return out;
}

export const one = (form: Form, key: string): string | undefined => {
  const v = form[key];
  return Array.isArray(v) ? v[0] : v;
};
export const many = (form: Form, key: string): string[] => [form[key] ?? []].flat();

/** A path on this site to return to (never another site: `//host` and schemes are refused). */
export function safeBack(back: string | undefined, fallback: string): string {
  return back !== undefined && /^\/(?![/\\])/.test(back) ? back : fallback;
}
