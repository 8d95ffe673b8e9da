/** Only same-site paths are followed after signing in (no open redirect, however the path is spelled). */
export function safeNext(next: unknown): string {
  // Browsers drop tabs and newlines from URLs ("/\t/evil.com" is "//evil.com"): no control character, no backslash.
  if (typeof next !== "string" || !next.startsWith("/") || next.includes("\\") || [...next].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return "/approvals";
  try {
    const url = new URL(next, "http://holdfast.invalid");
    return url.origin === "http://holdfast.invalid" ? `${url.pathname}${url.search}${url.hash}` : "/approvals";
  } catch {
    return "/approvals";
  }
}
