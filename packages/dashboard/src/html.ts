/**
 * The one way the dashboard writes HTML: the `html` tagged template. Every interpolated value is
 * escaped (text and attribute-safe: & < > " ' `) unless it is itself an `Html` made by `html` — so a
 * task's payload, an agent's name or an error message can never become markup. Arrays are joined;
 * null, undefined and false render nothing.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Join fragments with a separator (the separator is escaped like any value). */
export function join(parts: readonly Html[], separator: string): Html {
  return new Html(parts.map((p) => p.value).join(escapeHtml(separator)));
}
