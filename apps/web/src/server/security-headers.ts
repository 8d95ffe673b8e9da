/**
 * Every answer's headers: no framing by another site (the pages' CSP says frame-ancestors 'none' too), no type
 * sniffing, and no full address sent to another site in Referer (run and approval links carry ids). Next adds them
 * to its answers (next.config.ts `headers`); the web server's trigger routes to theirs (hook-server.ts).
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
};
