/**
 * The pages' Content-Security-Policy, with a fresh nonce per request: Next puts it on its own scripts (it reads the
 * nonce from this header during rendering; every page renders per request, the root layout reads the session).
 * - scripts: only this site's bundles and inline scripts carrying the nonce ('strict-dynamic' lets those load theirs);
 *   an injected `<script>` or `onerror=` attribute does not run;
 * - no page may be framed by another (frame-ancestors 'none', and X-Frame-Options: DENY in next.config for older
 *   browsers): a click in a frame cannot approve;
 * - forms post only to this site, and to Slack's consent page that Add to Slack's answer sends the browser on to;
 * - styles: this site's, and inline style attributes (React renders them; styles cannot run code).
 * API routes answer JSON and are not matched (their bodies stream to their own limits, never buffered here).
 */
export function contentSecurityPolicy(nonce: string, options: { dev: boolean; https: boolean; slackAuthorizeUrl: string }): string {
  let slack = "";
  try {
    slack = ` ${new URL(options.slackAuthorizeUrl).origin}`;
  } catch {
    // An unparsable setting is refused by env.ts when the web starts; here it adds nothing.
  }
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${options.dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    `form-action 'self'${slack}`,
    "frame-ancestors 'none'",
    ...(options.https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}
