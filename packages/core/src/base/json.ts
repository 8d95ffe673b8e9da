/**
 * PostgreSQL's jsonb cannot store U+0000 or unpaired UTF-16 surrogates (22P05), though JSON.parse accepts both.
 * Values we receive from outside are either refused at the edge (`hasUnstorableText`) or, for a provider's answer
 * we must record whatever it was, cleaned (`storable`).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding U+0000 is the point
const nul = /\u0000/g;

/** Walked with its own stack, not by recursion: however deep the value, this answers rather than overflowing. */
export function hasUnstorableText(value: unknown): boolean {
  const bad = (s: string) => s.includes("\u0000") || !s.isWellFormed();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (bad(v)) return true;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v && typeof v === "object") {
      for (const [k, item] of Object.entries(v)) {
        if (bad(k)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

/**
 * The value with every U+0000 and unpaired surrogate replaced by U+FFFD. A value with none (nearly every answer) is
 * given back as it is, after one read-only walk: cleaning copies the whole value.
 */
export function storable<T>(value: T): T {
  return hasUnstorableText(value) ? cleaned(value) : value;
}

function cleaned<T>(value: T): T {
  if (typeof value === "string") return value.replace(nul, "\uFFFD").toWellFormed() as T;
  if (Array.isArray(value)) return value.map(cleaned) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleaned(k), cleaned(v)])) as T;
  }
  return value;
}

/** JSON with sorted keys: the same payload hashes the same whatever order the sender wrote its keys in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * A JSON value as PostgreSQL's jsonb gives it back: what JSON cannot carry dropped (undefined, functions), and every
 * object's keys in jsonb's order (shorter keys first, then by their UTF-8 bytes). A worker that carries a value it
 * wrote instead of reading it back (run/apply/inline.ts stepsAfterSettle) sees exactly what a read would have shown.
 */
export function asJsonb<T>(value: T): T {
  return value === undefined ? value : (orderKeys(JSON.parse(JSON.stringify(value))) as T);
}

function orderKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(orderKeys);
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value).map((k) => ({ k, b: Buffer.from(k) }));
  keys.sort((x, y) => x.b.length - y.b.length || Buffer.compare(x.b, y.b));
  // fromEntries defines own properties: a key "__proto__" stays a key, as JSON.parse made it.
  return Object.fromEntries(keys.map(({ k }) => [k, orderKeys((value as Record<string, unknown>)[k])]));
}
