import { randomBytes } from "node:crypto";

/**
 * What a route handler can trust about who sent a request and how.
 *
 * `next start` (Next 16.4, base-server.js) fills `x-forwarded-for` with the socket's remote address only when the
 * request has none (`??=`): a client that sends its own X-Forwarded-For is believed. So without a proxy of our own
 * the header proves nothing. The web server (startup.ts) stamps every request with the TCP peer's address in a header whose
 * name is random per process (a client cannot send it), before Next sees the request; that is the address unless
 * TRUST_PROXY=1, when the proxy's X-Forwarded-For is used (its last entry: the address the proxy itself saw; earlier
 * entries are the client's own claims).
 */
const shared = globalThis as typeof globalThis & { holdfastPeerHeader?: string };

/** The stamp's header name, the same for the instrumentation hook and every route bundle of this process. */
export function peerHeader(): string {
  shared.holdfastPeerHeader ??= `x-holdfast-peer-${randomBytes(12).toString("hex")}`;
  return shared.holdfastPeerHeader;
}

export function clientAddress(headers: Headers, trustProxy: boolean): string | null {
  if (trustProxy) {
    const hops = (headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
    const last = hops.at(-1);
    if (last) return last;
  }
  return headers.get(peerHeader()) || null;
}

/**
 * True when the request reached us over https: the deployment's public URL is https, the request URL is, or a proxy
 * says so with `X-Forwarded-Proto: https`. A client that claims https over plain http only gets a Secure cookie its
 * browser will not send back, so believing the header costs nothing.
 */
export function isHttpsRequest(request: { url: string; headers: Headers }, publicUrl: string): boolean {
  if (publicUrl.toLowerCase().startsWith("https:")) return true;
  try {
    if (new URL(request.url).protocol === "https:") return true;
  } catch {
    // A relative or odd URL says nothing either way.
  }
  return (request.headers.get("x-forwarded-proto") ?? "")
    .split(",")
    .some((p) => p.trim().toLowerCase() === "https");
}
