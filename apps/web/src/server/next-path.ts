const fallback = "/approvals";
const base = "http://holdfast.invalid";

/** Control characters (browsers drop tabs and newlines from URLs: "/\t/evil.com" is "//evil.com") and backslashes
 * (browsers read "\" as "/" in special URLs). */
const hasUnsafeChar = (s: string) => [...s].some((c) => c === "\\" || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** The path a URL parser makes of `path` on this site, or null when it would leave the site. */
function normalised(path: string): string | null {
  if (!path.startsWith("/") || hasUnsafeChar(path)) return null;
  let url: URL;
  try {
    url = new URL(path, base);
  } catch {
    return null;
  }
  if (url.origin !== base) return null;
  // Dot segments collapse ("/.//evil.com" and "/%2e//evil.com" become "//evil.com"): judge the result, not the input.
  if (url.pathname.startsWith("//") || url.pathname.startsWith("/\\")) return null;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** True when `path`, and every reading of it with its percent-escapes decoded once, twice, ..., stays on this site. */
function staysOnSite(path: string): boolean {
  let decoded = path;
  for (let i = 0; i < 5; i++) {
    if (normalised(decoded) === null) return false;
    const once = percentDecoded(decoded);
    if (once === decoded) return true;
    decoded = once;
  }
  return false;
}

/**
 * Only same-site paths are followed after signing in (no open redirect, however the path is spelled). A later hop
 * (a proxy, a router, a second redirect) may decode "%2f" or "%5c", so the path is judged as given and with its
 * escapes decoded, repeatedly, both before and after normalising; every reading must stay on this site, or the
 * answer is the inbox. What is returned is the normalised path that was judged: never "//..." or "/\...".
 */
export function safeNext(next: unknown): string {
  if (typeof next !== "string" || next.length > 2_000) return fallback;
  const result = normalised(next);
  if (result === null || !staysOnSite(next) || !staysOnSite(result)) return fallback;
  return result;
}

/** Each "%XX" as its byte, leniently (a malformed escape elsewhere does not stop the others being decoded). */
const percentDecoded = (s: string) => s.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
