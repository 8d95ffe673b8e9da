import { z } from "zod";
import { defineConnectionKind, httpUrl } from "./kind";

const url = httpUrl();

/** Headers the request itself sets: a connection may not replace them. */
const reserved = new Set(["host", "content-length", "content-type", "idempotency-key", "holdfast-run-id", "connection", "transfer-encoding"]);

/**
 * An HTTP API credential for http_request steps: the header it goes in (Authorization by default) and, optionally,
 * the API's base URL. The header's value is the encrypted secret, so a token never sits in a graph.
 */
export const httpConnectionConfig = z
  .object({
    header: z
      .string()
      .trim()
      .min(1, "is required")
      .max(100, "is too long")
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be a header name: letters, digits and -, e.g. Authorization or X-Api-Key")
      .refine((h) => !reserved.has(h.toLowerCase()), "is set by the request itself: pick another header")
      .default("Authorization"),
    /** Test connection calls it; the credential is only ever sent to URLs under it. */
    baseUrl: z
      .string()
      .trim()
      .refine((v) => url(v) === true, "must be a web address starting with https://"),
  })
  .strict();
export type HttpConnectionConfig = z.infer<typeof httpConnectionConfig>;

/** Whether a request URL is under the connection's base URL (same origin, path below it). */
export function underBaseUrl(requestUrl: string, baseUrl: string): boolean {
  try {
    const u = new URL(requestUrl);
    const b = new URL(baseUrl);
    if (u.origin !== b.origin) return false;
    const base = b.pathname.replace(/\/+$/, "");
    return u.pathname.replace(/\/+$/, "") === base || u.pathname.startsWith(`${base}/`);
  } catch {
    return false;
  }
}

export const httpKind = defineConnectionKind({
  kind: "http",
  label: "HTTP API",
  description: "A credential for HTTP request steps: a header (usually Authorization) sent with each call, so the token is never written into the automation.",
  config: httpConnectionConfig,
  defaults: { header: "Authorization" },
  fields: [
    { name: "header", label: "Header name", required: true, help: "The header the API reads its credential from: Authorization, X-Api-Key ...", widget: { type: "text", placeholder: "Authorization" } },
    {
      name: "baseUrl",
      label: "Base URL",
      required: true,
      help: "The credential is only ever sent to addresses under it (so a step cannot send it elsewhere), and Test connection calls it.",
      widget: { type: "text", format: "url", placeholder: "https://api.example.com" },
    },
  ],
  secret: { label: "Header value", help: 'The whole value, e.g. "Bearer sk_live_..." for Authorization, or the bare key for X-Api-Key.', required: true },
  summary: (c) => `${c.header} header${c.baseUrl ? ` for ${c.baseUrl}` : ""}`,
});
