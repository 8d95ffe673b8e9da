import { randomBytes } from "node:crypto";
import { type NextRequest, NextResponse } from "next/server";
import { contentSecurityPolicy } from "./server/csp";
import { slackAuthorizeUrlDefault } from "./server/slack-urls";

/** The pages' Content-Security-Policy with a fresh nonce per request (server/csp.ts says what it allows and why). */
export function proxy(request: NextRequest): NextResponse {
  const nonce = randomBytes(16).toString("base64");
  const policy = contentSecurityPolicy(nonce, {
    dev: process.env.NODE_ENV === "development",
    https: (process.env.HOLDFAST_PUBLIC_URL ?? "").startsWith("https:"),
    // The web's settings (env-schema.ts) are not loaded here: the same variables, the same default.
    slackAuthorizeUrl: process.env.SLACK_AUTHORIZE_URL ?? slackAuthorizeUrlDefault,
  });
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  // Pages only: not the API routes, Next's static files or the metrics endpoint (none of them is a page).
  matcher: [{ source: "/((?!api/|_next/static|_next/image|favicon.ico|metrics).*)" }],
};
